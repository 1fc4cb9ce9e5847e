"""Progress of a tuning run: a bar on a terminal, plain lines everywhere else (CI, a cluster job's log)."""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

from ..errors import InputError

#: The ``--no-progress`` help of the commands that tune.
NO_PROGRESS_HELP = "no progress reports (a bar on a terminal, a line per rung and per 10%% of fits elsewhere)"


def legend(alpha) -> str:
    """The progress lines' terms, said once before them.

    >>> print(legend(0.5))
    progress: "weighted score" = alpha * accuracy + (1 - alpha) * fairness, what Fairband ranks fits by; alpha = 0.5 \
(1 = accuracy only, 0 = fairness only); "top so far" is the fit ranked first so far, not the pick, which is \
chosen when the run ends (refit, and meeting the fairness line)
    """
    rule = ("alpha is FB-auto's: 0.5 * (mean fairness - mean accuracy) + 0.5 over the fits so far, so the "
            "score leans to whichever of the two the fits reach less" if alpha == "auto"
            else f"alpha = {float(alpha):g}")
    return (f'progress: "weighted score" = alpha * accuracy + (1 - alpha) * fairness, what Fairband ranks fits '
            f'by; {rule} (1 = accuracy only, 0 = fairness only); "top so far" is the fit ranked first so far, not '
            "the pick, which is chosen when the run ends (refit, and meeting the fairness line)")


def elapsed_text(seconds: float) -> str:
    """``42s``, ``3m05s``, ``2h01m``.

    >>> elapsed_text(42.4), elapsed_text(185), elapsed_text(7260)
    ('42s', '3m05s', '2h01m')
    """
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class FitProgress:
    """Optuna callback reporting fits done, the top weighted score so far and the time elapsed.

    On a terminal it draws a tqdm bar. Anywhere else it prints one line whenever a Fairband rung
    finishes and whenever another tenth of the fits is done, for example
    ``fits 81/206 (39%), rung 0 of bracket 4 done; top weighted score so far 0.8731 (trial 41, alpha 0.62); 12s``
    (the fit ranked first so far, not the pick: that is chosen when the run ends).
    ``alpha`` is the pick's rule: a float, or ``"auto"`` for FB-auto's dynamic alpha. Only trials numbered
    below ``total`` count (a run's overflow trials do not). ``enabled=False`` reports nothing.

    >>> import io, optuna
    >>> optuna.logging.set_verbosity(optuna.logging.WARNING)
    >>> out = io.StringIO()
    >>> progress = FitProgress(total=4, alpha=0.5, stream=out)
    >>> study = optuna.create_study(directions=["maximize", "maximize"])
    >>> study.optimize(lambda t: (0.25 * (t.number + 1), 0.5), n_trials=4, callbacks=[progress])
    >>> progress.close()
    >>> out.getvalue().splitlines()[-1].split(";")[:2]
    ['fits 4/4 (100%)', ' top weighted score so far 0.7500 (trial 3)']
    """

    def __init__(self, total: int, alpha, *, stream=None, label: str = "", enabled: bool = True) -> None:
        if not isinstance(total, int) or total < 1:
            raise InputError(f"total must be a positive integer, got {total!r}")
        self.total = total
        self.alpha = alpha
        self.stream = stream if stream is not None else sys.stdout
        self.label = label
        self.enabled = bool(enabled)
        self.on_terminal = bool(getattr(self.stream, "isatty", lambda: False)())
        self._lock = threading.Lock()
        self._start = time.monotonic()
        self._tenths: int | None = None
        self._rungs_done: set = set()
        self._bar: Any = None  # a tqdm bar, made on the first draw

    # ------------------------------------------------------------------------------ state
    def _rung_size(self, study, key) -> int | None:
        from ..fairband import rung_sizes

        eta, s_max = getattr(study.sampler, "eta", None), getattr(study.sampler, "s_max", None)
        if eta is None or s_max is None:
            return None
        _, bracket, rung = key
        try:
            return rung_sizes(int(bracket), eta, s_max)[int(rung)]
        except (ValueError, IndexError):
            return None

    def _finished_rungs(self, study, trials) -> list[tuple]:
        """(iteration, bracket, rung) of synchronous Fairband rungs now complete and not yet reported."""
        counts: dict = {}
        for trial in trials:
            attrs = trial.user_attrs
            if {"iteration", "bracket", "rung"} <= attrs.keys():
                key = (attrs["iteration"], attrs["bracket"], attrs["rung"])
                counts[key] = counts.get(key, 0) + 1
        done = [key for key, count in counts.items()
                if key not in self._rungs_done and count == self._rung_size(study, key)]
        self._rungs_done.update(done)
        return sorted(done)

    def best_text(self, trials) -> str:
        """``top weighted score so far 0.8731 (trial 41, alpha 0.62)`` over the finished fits (empty before one)."""
        from ..fairband import select_best

        try:
            pick = select_best(trials, alpha=self.alpha)
        except ValueError:
            return ""
        alpha = f", alpha {pick.alpha:.2f}" if self.alpha == "auto" else ""
        return f"top weighted score so far {pick.score:.4f} (trial {pick.trial.number}{alpha})"

    # --------------------------------------------------------------------------- output
    def __call__(self, study, trial) -> None:
        if not self.enabled:
            return
        with self._lock:
            trials = [t for t in study.get_trials(deepcopy=False) if t.state.is_finished() and t.number < self.total]
            done = len(trials)
            if self.on_terminal:
                self._draw(done, trials)
                return
            tenths = 10 * done // self.total
            rungs = self._finished_rungs(study, trials)
            if self._tenths is None:  # where the run stood before this fit (a resumed run starts part-way)
                self._tenths = 10 * (done - 1) // self.total
            if not rungs and tenths <= self._tenths:
                return
            self._tenths = max(self._tenths, tenths)
            parts = [f"{self.label}fits {done}/{self.total} ({100 * done // self.total}%)"]
            parts[0] += "".join(f", rung {r} of bracket {b} done" for _, b, r in rungs)
            best = self.best_text(trials)
            parts += [f" {best}"] if best else []
            parts.append(f" {elapsed_text(time.monotonic() - self._start)}")
            print(";".join(parts), file=self.stream, flush=True)

    def _draw(self, done: int, trials) -> None:
        from tqdm.auto import tqdm

        if self._bar is None:
            self._bar = tqdm(total=self.total, initial=done, file=self.stream, unit="fit",
                             desc=self.label.rstrip(": ") or None, dynamic_ncols=True, leave=True)
        self._bar.n = done
        self._bar.set_postfix_str(self.best_text(trials).replace("top weighted score so far", "top so far"),
                                  refresh=False)
        self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
