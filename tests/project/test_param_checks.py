"""Each estimator's parameter table covers exactly its parameters, and the one checker refuses by name."""

import numpy as np
import pytest

from fairops._param_checks import (
    RANDOM_STATE,
    Interval,
    InvalidParameterError,
    Options,
    check_alpha,
    check_params,
    describe,
)
from fairops.fairlof import FairLOF
from fairops.fairlof._features import FeatureEncoder
from fairops.scaff import SCAFFClassifier, SCAFFTreeClassifier

ESTIMATORS = [SCAFFTreeClassifier, SCAFFClassifier, FairLOF, FeatureEncoder]


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_every_parameter_has_constraints_and_the_defaults_meet_them(cls):
    estimator = cls()
    assert set(cls._param_constraints) == set(estimator.get_params(deep=False))
    check_params(estimator.get_params(deep=False), cls._param_constraints)


@pytest.mark.parametrize("value", [True, np.bool_(False), np.nan, np.inf, "0.5", None, [0.5]])
def test_a_number_is_a_finite_real_that_is_not_a_boolean(value):
    with pytest.raises(InvalidParameterError, match=r"^theta must be a number in \[0, 1\], got "):
        check_params({"theta": value}, {"theta": [Interval("real", 0, 1)]})


def test_integer_float_and_open_ranges():
    table = {"split": [Interval("int", 2, None), Interval("float", 0, 1, "right")],
             "power": [Interval("real", 0, None, "neither")]}
    for split in (2, np.int64(7), 0.5, 1.0):
        check_params({"split": split, "power": 1e300}, table)
    for split in (1, 0.0, 1.5, True):
        with pytest.raises(InvalidParameterError, match=r"split must be an integer >= 2 or a float in \(0, 1\]"):
            check_params({"split": split, "power": 1.0}, table)
    for power in (0, -1.0, np.inf):
        with pytest.raises(InvalidParameterError, match="power must be a finite number > 0"):
            check_params({"split": 2, "power": power}, table)


def test_the_error_is_both_value_and_type_error_and_names_the_first_bad_parameter():
    table = {"mode": [Options("max", "mean")], "seed": RANDOM_STATE}
    with pytest.raises(ValueError, match=r"^mode must be one of \['max', 'mean'\], got 'min'$"):
        check_params({"mode": "min", "seed": -1}, table)
    with pytest.raises(TypeError, match=r"^seed must be None, an integer in \[0, 4294967295\] or a numpy"):
        check_params({"mode": "max", "seed": -1}, table)
    check_params({"mode": "max", "seed": np.random.RandomState(0)}, table)
    assert describe([None, bool, str, dict, callable]) == "None, True or False, a string, a dict or a callable"


@pytest.mark.parametrize("value, checked", [("auto", "auto"), (0, 0.0), (1, 1.0), (0.5, 0.5), (np.float32(0.25), 0.25),
                                            (np.int64(1), 1.0)])
def test_alpha_is_auto_or_a_real_number_in_zero_one(value, checked):
    result = check_alpha(value)
    assert result == checked and type(result) is type(checked)


@pytest.mark.parametrize("value", [-0.1, 1.5, np.nan, np.inf, True, np.bool_(True), "dynamic", "0.5", None, [0.5]])
def test_any_other_alpha_is_refused_as_a_value_and_a_type_error(value):
    with pytest.raises(InvalidParameterError, match=r"^alpha must be 'auto' or a float in \[0, 1\], got "):
        check_alpha(value)
    assert issubclass(InvalidParameterError, ValueError) and issubclass(InvalidParameterError, TypeError)


def test_alpha_without_auto_and_the_words_a_caller_gives():
    with pytest.raises(InvalidParameterError, match=r"^alpha must be a float in \[0, 1\], got 'auto'$"):
        check_alpha("auto", auto=False)
    with pytest.raises(InvalidParameterError, match=r"^alpha must be in \[0, 1\], got 1.5$"):
        check_alpha(1.5, auto=False, accepted="")
    with pytest.raises(InvalidParameterError, match=r"^--fairband-alpha must be a number in \[0, 1\], got -1$"):
        check_alpha(-1, name="--fairband-alpha", accepted="a number")


def test_every_taker_of_an_alpha_checks_it_with_the_one_check():
    from fairops.fairband import FairbandPruner, FairbandSampler, FairbandSettings
    from fairops.jobs._outliers.tuning import OutlierTuneSettings
    from fairops.jobs._tune.settings import TuneSettings
    from fairops.metrics import Task, make_fairness_scorer
    from fairops.tracking import FairnessTrackingCallback

    task = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["group"])
    takers = [lambda: FairbandSettings(alpha=1.5), lambda: FairbandSampler(alpha=1.5),
              lambda: FairbandPruner(alpha=1.5), lambda: make_fairness_scorer(task, alpha=1.5),
              lambda: FairnessTrackingCallback("sqlite:///:memory:", alpha=1.5), lambda: TuneSettings(alpha=1.5),
              lambda: OutlierTuneSettings(fairband_alpha=1.5)]
    for make in takers:
        with pytest.raises(InvalidParameterError, match=r"alpha must be .*in \[0, 1\], got 1.5"):
            make()
