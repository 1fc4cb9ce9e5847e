"""Each estimator's parameter table covers exactly its parameters, and the one checker refuses by name."""

import numpy as np
import pytest

from fairops._param_checks import RANDOM_STATE, Interval, InvalidParameterError, Options, check_params, describe
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
