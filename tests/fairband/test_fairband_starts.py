"""FairbandSampler(start_configurations=...): given configurations are the first full-budget fits, nothing
else of the schedule changes, and workers must agree on them."""

import optuna
import pytest

from fairops.fairband import FairbandConfigurationError, FairbandSampler, budget

optuna.logging.set_verbosity(optuna.logging.ERROR)
STARTS = [{"x": 0.25, "kind": "b"}, {"x": 0.75}]


def _objective(trial):
    x = trial.suggest_float("x", 0.0, 1.0)
    kind = trial.suggest_categorical("kind", ["a", "b"])
    return x * budget(trial), (1 - x) * (0.9 if kind == "b" else 1.0)


def _run(**options):
    study = optuna.create_study(directions=["maximize"] * 2,
                                sampler=FairbandSampler(seed=3, iterations=1, **options))
    study.optimize(_objective)
    return study


def _configurations(study) -> dict:
    return {t.user_attrs["configuration_id"]: t.params for t in study.trials if t.user_attrs.get("rung") == 0}


def test_start_configurations_are_the_first_full_budget_fits_and_nothing_else_moves():
    plain, started = _run(), _run(start_configurations=STARTS)
    full = sorted({t.user_attrs["configuration_id"] for t in started.trials if t.user_attrs.get("bracket") == 0})
    first, second = full[:2]
    drawn = _configurations(started)
    assert drawn[first] == STARTS[0]
    assert drawn[second]["x"] == 0.75 and drawn[second]["kind"] in ("a", "b")  # a left-out parameter is drawn
    assert all(t.user_attrs["budget"] == 1.0 for t in started.trials if t.user_attrs.get("configuration_id") in full)
    others = {c: p for c, p in _configurations(plain).items() if c not in (first, second)}
    assert {c: p for c, p in drawn.items() if c not in (first, second)} == others
    assert sum(t.state.name == "COMPLETE" for t in started.trials) == 206
    assert started.sampler.configuration["start_configurations"] == STARTS
    assert "start_configurations" not in plain.sampler.configuration  # studies started without them still match


def test_a_worker_with_other_start_configurations_is_refused():
    study = _run(start_configurations=STARTS)
    with pytest.raises(FairbandConfigurationError, match="start_configurations"):
        FairbandSampler(seed=3, iterations=1, start_configurations=STARTS[:1]).check_configuration(study)


def test_bad_start_configurations_are_refused():
    with pytest.raises(ValueError, match="bracket 0 has room for s_max \\+ 1 = 5"):
        FairbandSampler(start_configurations=[{"x": 0.5}] * 6)
    with pytest.raises(TypeError, match="list of dicts"):
        FairbandSampler(start_configurations=["x"])
    with pytest.raises(ValueError, match="x=2.0 is outside"):
        _run(start_configurations=[{"x": 2.0}])
