"""A worker that dies between creating a trial and starting its fit must not block the schedule.

Optuna starts its heartbeat thread only when ``ask()`` has returned, so such a trial would have no
heartbeat at all and ``fail_stale_trials`` would never fail it. ``study.ask()`` without ``tell`` is
exactly that state: the trial exists, RUNNING, holding its slot, and nothing beats for it afterwards.
The sampler beats for it from ``before_trial`` on, so the heartbeat fails it, and its slot is fitted by
a later trial.
"""

import optuna
import pytest
from optuna.storages import RDBStorage
from optuna.trial import TrialState

from fairops.fairband import FairbandSampler
from fairops.fairband._claims import fits_of_run, holds_slot, slot_of_trial
from fairops.tuning._toy import make_toy_objective


@pytest.mark.slow
def test_a_trial_abandoned_right_after_ask_is_failed_and_its_slot_fitted_again(tmp_path):
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    storage = RDBStorage(f"sqlite:///{tmp_path / 'hb.db'}", heartbeat_interval=1, grace_period=2)
    study = optuna.create_study(directions=["maximize", "maximize"], storage=storage,
                                sampler=FairbandSampler(seed=0, wait_timeout=60, iterations=1))
    abandoned = study.ask()  # the "dead worker": never told, never beats again
    study.optimize(make_toy_objective())
    trials = study.get_trials(deepcopy=False)
    dead = trials[abandoned.number]
    assert dead.state == TrialState.FAIL and holds_slot(dead) is None and slot_of_trial(dead) == 0
    fits = fits_of_run(trials, 206)
    assert len(fits) == 206 and all(t.state == TrialState.COMPLETE for t in fits)
    assert fits[0].number != abandoned.number and fits[0].user_attrs["configuration_id"] == 0
    assert {t.user_attrs["rung"] for t in fits} == {0, 1, 2, 3, 4}
