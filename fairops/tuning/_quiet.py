"""Tuning without a line per trial: Optuna's per-trial INFO off and the expected failures counted.

The objective fails a fit whose validation scores are constant (a tiny budget slice, a strongly
regularised model) by returning NaN; Optuna then warns twice per such trial. Those warnings are
expected, so :class:`~fairops.fairband._optuna_internals.NanTrialWarnings` drops them (other failures are still
reported as they happen), and :func:`quiet_trials` says in one line at the end how many fits finished and why
the others failed.

>>> import io, math, optuna
>>> study = optuna.create_study(directions=["maximize", "maximize"])
>>> out = io.StringIO()
>>> with quiet_trials(study, stream=out):
...     study.optimize(lambda t: (0.5, 0.5) if t.number else (math.nan, math.nan), n_trials=3)
>>> out.getvalue()
'3 fits: 2 finished, 1 failed (1 error); failed fits rank last and are never picked\\n'
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections import Counter
from typing import TYPE_CHECKING, TextIO

from ..fairband._optuna_internals import OPTIMIZE_LOGGER, NanTrialWarnings

if TYPE_CHECKING:
    from collections.abc import Iterator

    import optuna


@contextlib.contextmanager
def constant_fits_quiet():
    """Optuna's warnings about constant fits left out while the block runs."""
    logger = logging.getLogger(OPTIMIZE_LOGGER)
    quiet = NanTrialWarnings()
    logger.addFilter(quiet)
    try:
        yield
    finally:
        logger.removeFilter(quiet)


def failures(trials) -> Counter:
    """Failed fits by reason (``constant validation scores``, ``error``)."""
    from ._objective import failure_reason

    return Counter(reason for reason in map(failure_reason, trials) if reason is not None)


def fits_summary(trials) -> str:
    """``206 fits: 187 finished, 19 failed (19 constant validation scores); ...`` over finished trials; trials
    the Fairband schedule refused (asked after its iterations were complete, enqueued ones) are not fits and
    are counted apart."""
    from ..fairband._claims import REFUSED, claim_of

    finished: list = []
    refused: list = []
    for trial in (t for t in trials if t.state.is_finished()):
        claim = claim_of(trial)
        (refused if claim is not None and claim.status == REFUSED else finished).append(trial)
    failed = failures(finished)
    text = f"{len(finished)} fits: {len(finished) - sum(failed.values())} finished"
    if failed:
        reasons = ", ".join(f"{count} {reason}" for reason, count in sorted(failed.items()))
        text += f", {sum(failed.values())} failed ({reasons}); failed fits rank last and are never picked"
    if refused:
        last = claim_of(refused[-1]).reason  # type: ignore[union-attr]  # a refused trial has its claim
        text += f"; {len(refused)} trial(s) refused by the schedule, not fits (the last: {last})"
    return text


def ignore_short_fit_warnings() -> None:
    """Small budget slices make short fits: unconverged or clipped-batch fits are expected, not news."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    warnings.filterwarnings("ignore", message=".*batch_size.*clipped.*")


@contextlib.contextmanager
def quiet_trials(study: optuna.Study, *, stream: TextIO | None = None) -> Iterator[None]:
    """``study.optimize`` inside the block prints no line per trial; one summary line at the end.

    Optuna's verbosity is WARNING inside the block (restored after it); left out are the constant fits'
    warnings and the warnings small budget slices make expected (unconverged short fits, an MLP's batch
    clipped to a small slice). Other failures and warnings still show.

    Parameters
    ----------
    study : optuna.Study
        The study the summary line counts the fits of.
    stream : file-like or None, default=None
        Where the line goes (None: standard output).

    Yields
    ------
    None
        Control, while the block runs.
    """
    import warnings

    import optuna

    verbosity = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        with constant_fits_quiet(), warnings.catch_warnings():
            ignore_short_fit_warnings()
            yield
    finally:
        optuna.logging.set_verbosity(verbosity)
    print(fits_summary(study.get_trials(deepcopy=False)), file=stream or sys.stdout)
