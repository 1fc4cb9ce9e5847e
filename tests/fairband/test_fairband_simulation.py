"""The discrete-event simulation behind docs/fairband/utilisation.md's table, on a made-up fit-time table
where the right answers are known by hand."""

import csv
import importlib.util
from pathlib import Path

import pytest

from fairops.fairband import schedule

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "fairband_simulation.py"
spec = importlib.util.spec_from_file_location("fairband_simulation", SCRIPT)
simulation = importlib.util.module_from_spec(spec)
spec.loader.exec_module(simulation)

BUDGETS = (1 / 81, 1 / 27, 1 / 9, 1 / 3, 1.0)


@pytest.fixture
def fit_times(tmp_path):
    """One family whose fit takes 1 s per unit of budget plus 0.1 s, two identical configurations."""
    path = tmp_path / "times.csv"
    with open(path, "w", newline="") as handle:
        fields = ["family", "budget", "sample", "seconds", "max_train_rows", "profile"]
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        for sample in range(2):
            for budget in BUDGETS:
                writer.writerow({"family": "f", "budget": budget, "sample": sample, "seconds": 0.1 + budget,
                                 "max_train_rows": 100, "profile": "fast"})
    return simulation.FitTimes(path)


def test_one_worker_is_always_busy_and_takes_the_sum_of_its_fits(fit_times):
    expected = sum(n * (0.1 + schedule.rung_budget(s, i))
                   for s in range(5) for i, n in enumerate(schedule.rung_sizes(s)))
    result = simulation.simulate("sync", 1, fit_times)
    assert result["fits"] == 206
    assert result["wall_seconds"] == pytest.approx(expected)
    assert result["utilisation"] == pytest.approx(1.0)
    for policy in ("async", "optuna-hb"):
        assert simulation.simulate(policy, 1, fit_times)["utilisation"] == pytest.approx(1.0)


def test_with_a_worker_per_fit_sync_takes_its_critical_path(fit_times):
    """Enough workers: each bracket's rungs run one after another; the longest chain sets the wall time."""
    chains = [sum(0.1 + schedule.rung_budget(s, i) for i in range(s + 1)) for s in range(5)]
    result = simulation.simulate("sync", 206, fit_times)
    assert result["wall_seconds"] == pytest.approx(max(chains))
    assert result["fits"] == 206 and result["utilisation"] < 0.2


def test_shared_cores_stretch_each_fit_and_keep_the_machine_busy(fit_times):
    alone = simulation.simulate("async", 8, fit_times, cores=None)
    shared = simulation.simulate("async", 8, fit_times, cores=1)
    assert shared["wall_seconds"] == pytest.approx(alone["fit_seconds"], rel=0.02)  # one core does all the work
    assert shared["fits"] == alone["fits"]


def test_asynchronous_promotions_follow_each_rule(fit_times):
    """FairbandPruner never promotes while fewer than eta trials reached a rung; Optuna's rule promotes the
    best so far, so it trains more."""
    fairband = simulation.simulate("async", 1, fit_times)
    optuna_hb = simulation.simulate("optuna-hb", 1, fit_times)
    assert 143 < fairband["fits"] < 206
    assert optuna_hb["fits"] > 143
    with pytest.raises(ValueError, match="policy must be one of"):
        simulation.simulate("asha", 1, fit_times)


def test_several_iterations_keep_sync_workers_busier(fit_times):
    one = simulation.simulate("sync", 32, fit_times, iterations=1)
    four = simulation.simulate("sync", 32, fit_times, iterations=4)
    assert four["fits"] == 4 * 206
    assert four["utilisation"] > one["utilisation"]
