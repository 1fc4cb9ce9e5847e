"""How a trial waits for other trials: pauses between storage reads, its heartbeat, dead workers failed.

The pause doubles from half a millisecond up to a bound, and ends early whenever a trial of this process
claims a slot. With a storage that has heartbeats, the waiting trial keeps beating and fails trials whose
heartbeat went stale, so their slots are redone instead of waited for.
"""

from __future__ import annotations

import logging
import threading
import time

from ..errors import InputError
from . import _optuna_internals as internals
from ._errors import FairbandWaitTimeout

# A running trial that has written nothing yet is judged dead after this many heartbeat intervals
# (a live one writes its claim milliseconds after it is created).
SILENT_TRIAL_BEATS = 5

_logger = logging.getLogger("fairops.fairband.sampler")  # the sampler's log, where this was always written


def positive_seconds(value, name: str) -> float:
    """``value`` as a float of seconds; a ValueError naming ``name`` unless it is a positive number.

    >>> positive_seconds(2, "wait_timeout")
    2.0
    """
    if not (isinstance(value, (int, float)) and value > 0):
        raise InputError(f"{name} must be a positive number of seconds, got {value!r}")
    return float(value)


class Waiter:
    """Pauses between storage reads while ``trial`` waits for ``what``; keeps its heartbeat and fails dead trials.

    ``claimed`` is the condition notified whenever a trial of this process claims a slot; ``wait_timeout``
    bounds the whole wait (:class:`~fairops.fairband.FairbandWaitTimeout` after it) and ``poll_interval``
    the pause while waiting for fits.
    """

    def __init__(self, study, trial, what: str, claimed: threading.Condition, wait_timeout: float,
                 poll_interval: float) -> None:
        self.study, self.trial, self.what = study, trial, what
        self.claimed, self.wait_timeout, self.poll_interval = claimed, wait_timeout, poll_interval
        self.start = self.last_beat = self.last_check = time.monotonic()
        self.pause = 0.0005
        self.interval = internals.heartbeat_interval(study)
        self.silent_since: tuple[int, float] | None = None

    def _tick(self, waiting_for: list[int]) -> None:
        now = time.monotonic()
        waited = now - self.start
        if waited > self.wait_timeout:
            raise FairbandWaitTimeout(
                f"trial {self.trial.number} waited {waited:.0f} s > wait_timeout="
                f"{self.wait_timeout:g} s for {self.what} (trials {waiting_for[:10]}); a worker "
                "probably died. Use an RDB storage with heartbeat_interval so dead workers' trials are "
                "failed and redone, or raise wait_timeout for long fits")
        if self.interval is not None:
            if now - self.last_beat >= self.interval:
                internals.beat(self.study, self.trial)
                self.last_beat = now
            if now - self.last_check >= min(self.interval, 1.0):
                internals.fail_stale_trials(self.study)
                self.last_check = now

    def wait_for_claims(self, earlier: list[int]) -> None:
        """Pause while the running trials ``earlier`` (lowest first) have not claimed their slots."""
        self._tick(earlier)
        lowest = earlier[0]
        now = time.monotonic()
        if self.silent_since is None or self.silent_since[0] != lowest:
            self.silent_since = (lowest, now)
        elif self.interval is not None and now - self.silent_since[1] > SILENT_TRIAL_BEATS * self.interval:
            # It has not claimed though nothing before it is pending: its worker died before its first write.
            if internals.fail_running_trial(self.study, lowest):
                _logger.warning("trial %d never claimed a slot within %.0f s; failed as dead", lowest,
                                now - self.silent_since[1])
            self.silent_since = None
        self._sleep(0.05)

    def wait_for_fits(self, running: list[int]) -> None:
        """Pause while the trials ``running`` fit the slots waited for."""
        self._tick(running)
        self._sleep(self.poll_interval)

    def _sleep(self, longest: float) -> None:
        with self.claimed:
            self.claimed.wait(timeout=self.pause)
        self.pause = min(self.pause * 2, longest)
