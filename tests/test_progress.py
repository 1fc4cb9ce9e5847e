import io

import optuna

from fairops.fairband import FairbandSampler, budget
from fairops.jobs.progress import FitProgress


class Terminal(io.StringIO):
    def isatty(self):
        return True


def _objective(trial):
    x = trial.suggest_float("x", 0, 1)
    return x * budget(trial), 1 - x


def test_bar_on_a_terminal_shows_count_alpha_and_pick():
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    stream = Terminal()
    progress = FitProgress(total=206, alpha="auto", stream=stream)
    study = optuna.create_study(directions=["maximize"] * 2, sampler=FairbandSampler(seed=0))
    study.optimize(_objective, n_trials=206, callbacks=[progress])
    progress.close()
    last = stream.getvalue().rstrip("\n").split("\r")[-1]
    assert last.startswith("[" + "#" * 30 + "] 206/206 fits")
    assert "alpha " in last and "best: #" in last


def test_nothing_is_drawn_off_a_terminal():
    stream = io.StringIO()
    progress = FitProgress(total=3, alpha=0.5, stream=stream)
    study = optuna.create_study(directions=["maximize"] * 2)
    study.optimize(lambda t: (t.suggest_float("x", 0, 1), 0.5), n_trials=3, callbacks=[progress])
    progress.close()
    assert stream.getvalue() == ""
