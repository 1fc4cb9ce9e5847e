"""`fairops tune --storage grpc://...`: workers through Optuna's gRPC storage proxy (`fairops grpc-proxy`).

The proxy forwards no heartbeats of its own; fairops carries them as trial attributes, so a killed
worker's fit is failed and redone as on PostgreSQL directly.
"""

import signal
import time
import uuid
from collections import Counter

import optuna
import pytest
from optuna.trial import TrialState

from fairops.cli import main
from fairops.fairband import _optuna_internals as internals
from fairops.fairband._claims import claim_of, fits_of_run, holds_slot
from fairops.jobs._grpc_storage import BEAT_ATTR, HeartbeatGrpcStorage, open_grpc_storage
from fairops.jobs._running import open_storage
from fairops.tuning._objective import CONSTANT_SCORES, failure_reason
from tests.jobs.test_distributed import (
    CONFIGURATIONS,
    FAST,
    FITS,
    _child_runs,
    _drop,
    _kill_the_held_worker,
    _same_as_single,
    _workers,
)
from tests.services import free_port, grpc_storage_proxy

pytestmark = pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning",
                                        "ignore:Heartbeat of storage")
N_WORKERS = 8


def test_bad_grpc_urls_and_settings_are_refused_by_name():
    with pytest.raises(ValueError, match="no port"):
        open_storage("grpc://127.0.0.1")
    with pytest.raises(ValueError, match="nothing else"):
        open_storage("grpc://127.0.0.1:13000/db")
    with pytest.raises(ValueError, match="grace_period must exceed heartbeat_interval"):
        HeartbeatGrpcStorage(port=free_port(), heartbeat_interval=5, grace_period=5)
    with pytest.raises(ValueError, match="no gRPC storage proxy answers at 127.0.0.1"):
        open_grpc_storage(f"grpc://127.0.0.1:{free_port()}", heartbeat=1, timeout=0.5)


def test_the_proxy_command_refuses_what_it_cannot_serve(capsys):
    assert main(["grpc-proxy", "--storage", "study.journal"]) == 2
    assert "database URL" in capsys.readouterr().err
    assert main(["grpc-proxy", "--storage", "sqlite:///x.db", "--threads", "0"]) == 2
    assert "--threads" in capsys.readouterr().err


@pytest.mark.slow
def test_a_trial_that_stops_beating_is_failed_through_the_proxy_and_a_beating_one_is_not(tmp_path):
    failed = []
    with grpc_storage_proxy(f"sqlite:///{tmp_path / 'optuna.db'}", tmp_path) as url:
        storage = open_storage(url, heartbeat=1, on_stale=lambda study, trial: failed.append(trial.number))
        study = optuna.create_study(storage=storage, study_name="beats")
        silent, beating = study.ask(), study.ask()
        assert internals.heartbeat_interval(study) == 1
        start = time.monotonic()
        while time.monotonic() - start < 6:
            internals.beat(study, beating)
            internals.fail_stale_trials(study)
            time.sleep(0.3)
        trials = study.get_trials(deepcopy=False)
        assert [t.state for t in trials] == [TrialState.FAIL, TrialState.RUNNING]
        assert failed == [silent.number]
        assert BEAT_ATTR in trials[beating.number].system_attrs

        def last_beat():
            return storage.get_trial(beating._trial_id).system_attrs[BEAT_ATTR]

        time.sleep(0.6)  # past the window (half an interval) since the loop's last written beat
        storage.record_heartbeat(beating._trial_id)
        written = last_beat()
        storage.record_heartbeat(beating._trial_id)  # moments later: the same beat, not written again
        assert last_beat() == written
        time.sleep(0.6)
        storage.record_heartbeat(beating._trial_id)
        assert last_beat() > written

        # several attributes of one write go out at once on a proxy, all written; a finished trial refuses them
        internals.write_trial_attrs(study, beating, user={"a": 1, "b": [2]}, system={"c": "3"})
        attrs = storage.get_trial(beating._trial_id)
        assert (attrs.user_attrs["a"], attrs.user_attrs["b"], attrs.system_attrs["c"]) == (1, [2], "3")
        study.tell(beating, 1.0)
        with pytest.raises(optuna.exceptions.UpdateFinishedTrialError):
            internals.write_trial_attrs(study, beating, user={"a": 5, "d": 6})
        storage.record_heartbeat(beating._trial_id)  # a late beat of a finished trial is ignored, not raised
        storage.close()


@pytest.mark.slow
@pytest.mark.postgres
def test_eight_workers_through_one_proxy_give_the_one_worker_schedule_and_survive_a_kill(
        postgres_url, mlflow_server, tmp_path, single):
    name = f"grpc-{uuid.uuid4().hex[:8]}"
    database = optuna.storages.RDBStorage(postgres_url)  # the test reads the database itself
    try:
        with grpc_storage_proxy(postgres_url, tmp_path) as grpc_url:
            workers = _workers(N_WORKERS, grpc_url, mlflow_server, name, tmp_path, held=tmp_path / "held")
            victims = [_kill_the_held_worker(workers, tmp_path / "held")]
            caught = f":{victims[0].pid}"
            assert any(t.state == TrialState.RUNNING and claim_of(t) and claim_of(t).worker.endswith(caught)
                       for t in optuna.load_study(study_name=name, storage=database).get_trials(deepcopy=False))
            for worker in workers:
                if worker not in victims:
                    _, err = worker.communicate(timeout=900)
                    assert worker.returncode == 0, err[-3000:]
            assert all(victim.returncode == -signal.SIGKILL for victim in victims)
            # the pick, through the proxy as well: joins, finds every fit done, refits and registers
            assert main(["tune", *FAST, "--storage", grpc_url, "--tracking-uri", mlflow_server, "--study-name", name,
                         "--model-name", name, "--project-dir", str(tmp_path), "--heartbeat", "1"]) == 0

        trials = optuna.load_study(study_name=name, storage=database).get_trials(deepcopy=False)
        fits = fits_of_run(trials, FITS)
        # every fit finished: complete, or failed on purpose for constant validation scores
        assert all(t.state == TrialState.COMPLETE or failure_reason(t) == CONSTANT_SCORES for t in fits)
        assert len({(t.user_attrs["bracket"], t.user_attrs["configuration_id"]) for t in fits}) == CONFIGURATIONS
        assert len({(t.user_attrs["bracket"], t.user_attrs["rung"], t.user_attrs["configuration_id"])
                    for t in fits}) == FITS  # no fit twice
        dead = [t for t in trials if t.state == TrialState.FAIL and holds_slot(t) is None and t.params]
        assert dead and {claim_of(t).worker.rsplit(":", 1)[1] for t in dead} <= {str(v.pid) for v in victims}
        assert {claim_of(t).slot for t in dead} <= {claim_of(t).slot for t in fits}  # redone by another worker
        others = [t for t in trials if holds_slot(t) is None and t not in dead]
        assert all(not t.params for t in others)  # refused or waiting trials, never fitted
        assert len({claim_of(t).worker for t in fits}) >= 2  # the work was shared
        _same_as_single(fits, single)

        runs = _child_runs(mlflow_server, name)
        by_trial = Counter(int(r.data.tags["fairops.trial_number"]) for r in runs)
        assert all(by_trial[t.number] == 1 for t in fits)
        assert all(r.info.status == "FINISHED" for r in runs if int(r.data.tags["fairops.trial_number"])
                   in {t.number for t in fits if t.state == TrialState.COMPLETE})
        assert all(r.info.status == "FAILED" for r in runs if int(r.data.tags["fairops.trial_number"])
                   in {t.number for t in dead})
    finally:
        _drop(postgres_url, name)
