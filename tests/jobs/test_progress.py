import io
import re

import optuna
import pytest

from fairops.fairband import FairbandSampler, _schedule as schedule, budget
from fairops.jobs._progress import FitProgress
from fairops.tuning._baselines import FullBudgetRandomSampler

optuna.logging.set_verbosity(optuna.logging.WARNING)


class Terminal(io.StringIO):
    def isatty(self):
        return True


def _objective(trial):
    x = trial.suggest_float("x", 0, 1)
    return x * budget(trial), 1 - x


def test_off_a_terminal_one_line_per_rung_and_per_tenth():
    stream = io.StringIO()
    progress = FitProgress(total=206, alpha="auto", stream=stream)
    study = optuna.create_study(directions=["maximize"] * 2, sampler=FairbandSampler(seed=0))
    study.optimize(_objective, n_trials=206, callbacks=[progress])
    progress.close()
    lines = stream.getvalue().splitlines()
    reported = [(int(b), int(r)) for line in lines for r, b in re.findall(r"rung (\d) of bracket (\d) done", line)]
    every_rung = [(s, i) for s in range(5) for i in range(len(schedule.rung_sizes(s)))]
    assert sorted(reported) == sorted(every_rung)  # each of the 15 rungs exactly once
    done = [int(re.match(r"fits (\d+)/206", line)[1]) for line in lines]
    assert done == sorted(done) and done[-1] == 206
    for tenth in range(1, 11):  # a line at the first fit of every tenth
        assert any(d * 10 // 206 == tenth for d in done)
    assert len(lines) <= 15 + 10
    # the line where rung 0 of bracket 4 (81 fits) finishes
    line = next(line for line in lines if "rung 0 of bracket 4 done" in line)
    assert line.startswith("fits 81/206 (39%)")
    assert re.search(r"top weighted score so far \d\.\d{4} \(trial \d+, alpha \d\.\d\d\); \d+s$", line)


def test_top_weighted_score_is_the_fit_ranked_first_so_far():
    from fairops.fairband import select_best

    stream = io.StringIO()
    progress = FitProgress(total=24, alpha=0.5, stream=stream, label="seed 0 RS: ")
    study = optuna.create_study(directions=["maximize"] * 2, sampler=FullBudgetRandomSampler(seed=1))
    study.optimize(_objective, n_trials=24, callbacks=[progress])
    lines = stream.getvalue().splitlines()
    assert len(lines) == 10 and all(line.startswith("seed 0 RS: fits ") for line in lines)
    pick = select_best(study, alpha=0.5)
    assert f"top weighted score so far {pick.score:.4f} (trial {pick.trial.number})" in lines[-1]


def test_a_resumed_run_reports_from_where_it_stands():
    study = optuna.create_study(directions=["maximize"] * 2, sampler=FullBudgetRandomSampler(seed=1))
    study.optimize(_objective, n_trials=15)
    stream = io.StringIO()
    study.optimize(_objective, n_trials=5, callbacks=[FitProgress(total=20, alpha=0.5, stream=stream)])
    done = [int(re.match(r"fits (\d+)/20", line)[1]) for line in stream.getvalue().splitlines()]
    assert done == [16, 18, 20]


def test_bar_on_a_terminal_shows_count_and_the_top_fit_so_far():
    stream = Terminal()
    progress = FitProgress(total=30, alpha=0.5, stream=stream)
    study = optuna.create_study(directions=["maximize"] * 2, sampler=FullBudgetRandomSampler(seed=0))
    study.optimize(_objective, n_trials=30, callbacks=[progress])
    progress.close()
    last = stream.getvalue().rstrip("\n").split("\r")[-1]
    assert "30/30" in last and "100%" in last and re.search(r"top so far \d\.\d{4} \(trial \d+\)", last)


def test_disabled_progress_prints_nothing():
    stream = io.StringIO()
    study = optuna.create_study(directions=["maximize"] * 2)
    study.optimize(lambda t: (t.suggest_float("x", 0, 1), 0.5), n_trials=3,
                   callbacks=[FitProgress(total=3, alpha=0.5, stream=stream, enabled=False)])
    assert stream.getvalue() == ""


def test_total_must_be_positive():
    with pytest.raises(ValueError, match="total must be a positive integer"):
        FitProgress(total=0, alpha=0.5)
