"""The errors a Fairband study raises (importable from :mod:`fairops.fairband`).

>>> issubclass(FairbandConfigurationError, FairbandScheduleError) and issubclass(FairbandConfigurationError, InputError)
True
"""  # noqa: E501 - a doctest's expected output is one line

from ..errors import InputError


class FairbandScheduleError(RuntimeError):
    """A trial does not fit the Fairband schedule (created outside it, or wrong study setup)."""


class FairbandConfigurationError(FairbandScheduleError, InputError):
    """A worker's configuration differs from the one the study was started with."""


class FairbandWaitTimeout(RuntimeError):
    """A trial waited longer than ``wait_timeout`` for other trials (the previous rung, or earlier claims)."""
