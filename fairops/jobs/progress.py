"""A one-line progress bar over fits, drawn only on a terminal."""

from __future__ import annotations

import sys
import threading

from optuna.trial import TrialState


class FitProgress:
    """Optuna callback drawing ``[#####     ] 57/206 fits  alpha 0.62  best: #41 acc 0.871 fair 0.930``.

    ``alpha`` is the pick's alpha (a float, or ``"auto"`` for the mean-based dynamic alpha);
    nothing is drawn when ``stream`` is not a terminal, so logs and CI output stay clean.

    >>> import io, optuna
    >>> progress = FitProgress(total=3, alpha=0.5, stream=io.StringIO())
    >>> progress.enabled
    False
    """

    def __init__(self, total: int, alpha, *, stream=None, width: int = 30) -> None:
        self.total = total
        self.alpha = alpha
        self.stream = stream if stream is not None else sys.stdout
        self.width = width
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self._lock = threading.Lock()

    def line(self, study) -> str:
        """The text of the bar for the study's current trials."""
        from ..fairband import select_best
        from ..fairband.ranking import dynamic_alpha

        trials = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.FAIL,
                                                          TrialState.PRUNED))
        done = min(len(trials), self.total)
        filled = int(self.width * done / max(self.total, 1))
        text = f"[{'#' * filled}{' ' * (self.width - filled)}] {done}/{self.total} fits"
        values = [tuple(t.values) for t in trials if t.state == TrialState.COMPLETE and t.values]
        if values:
            alpha = dynamic_alpha(values) if self.alpha == "auto" else float(self.alpha)
            try:
                pick = select_best(study, alpha=alpha)
            except ValueError:
                return text
            text += (f"  alpha {alpha:.2f}  best: #{pick.trial.number} "
                     f"acc {pick.accuracy:.3f} fair {pick.fairness:.3f}")
        return text

    def __call__(self, study, trial) -> None:
        if not self.enabled:
            return
        with self._lock:
            self.stream.write("\r" + self.line(study).ljust(100))
            self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
