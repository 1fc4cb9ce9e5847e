"""The Fairband paper's model families and hyperparameter spaces as Optuna suggestions.

Five families, as in the paper's published search space (the ``hyperparameters/*.yaml`` files of the
authors' repository) and logs: logistic regression, decision tree, random forest, LightGBM and a
feed-forward network. Two profiles:

- ``"paper"``: every choice of the paper (e.g. all 15 layer layouts of the network, C from 1e-5 to 1
  with l1 or l2) and every numeric range as far as the paper's draws reached in the logs. The paper
  drew integers from geometric, exponential and folded-normal priors; Optuna's samplers take ranges,
  so sizes are drawn log-uniformly (depths uniformly) over those ranges instead.
- ``"fast"``: the same families with sizes capped (trees, rounds, epochs, layer widths) so that one
  Fairband iteration (206 fits) on Adult takes minutes on two cores.

The network is scikit-learn's ``MLPClassifier`` (Adam, ReLU) inside
:class:`~fairops.models.WeightDecayMLP`, which
turns the paper's PyTorch weight decay into scikit-learn's L2 term with the same gradient. What has no
counterpart there is fixed rather than sampled: dropout is off (the weight decay is the only
regulariser), there is no batch norm on hidden layers (the pipeline standardises the inputs), and
Adam runs without the AMSGrad variant. Families live in a registry: :func:`register_family` adds one
(e.g. a fair forest) without touching this module.

>>> import optuna
>>> study = optuna.create_study()
>>> model = make_model(study.ask(), profile="fast", families=["decision_tree"])
>>> type(model.steps[-1][1]).__name__
'DecisionTreeClassifier'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from fairops.models import CategoryCodes, WeightDecayMLP

PROFILES = ("paper", "fast")


@dataclass(frozen=True)
class Family:
    """A model family: ``suggest(trial, profile, seed) -> estimator`` and whether it needs one-hot input."""

    name: str
    suggest: Callable
    needs_encoding: bool = True


def register_family(name: str, suggest: Callable, *, needs_encoding: bool = True) -> None:
    """Add a family to the registry (``suggest(trial, profile, seed)`` returns an unfitted estimator).

    Parameter names should be prefixed with the family name so families never share a distribution.

    >>> register_family("constant", lambda trial, profile, seed: None)
    >>> "constant" in FAMILIES
    True
    >>> del FAMILIES["constant"]
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    if not callable(suggest):
        raise TypeError(f"suggest must be callable, got {type(suggest).__name__}")
    FAMILIES[name] = Family(name, suggest, needs_encoding)


def _cap(profile: str, paper, fast):
    return fast if profile == "fast" else paper


def _logistic_regression(trial, profile, seed):
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(
        C=trial.suggest_categorical("lr_C", [1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0]),
        l1_ratio=1.0 if trial.suggest_categorical("lr_penalty", ["l1", "l2"]) == "l1" else 0.0,
        tol=trial.suggest_float("lr_tol", 5e-5, 1e-2, log=True),
        max_iter=trial.suggest_int("lr_max_iter", 101, _cap(profile, 8300, 300), log=True),
        solver="liblinear", random_state=seed)


def _decision_tree(trial, profile, seed):
    from sklearn.tree import DecisionTreeClassifier

    return DecisionTreeClassifier(
        criterion=trial.suggest_categorical("dt_criterion", ["gini", "entropy"]),
        max_depth=trial.suggest_int("dt_max_depth", 1, _cap(profile, 46, 20)),
        min_samples_leaf=trial.suggest_int("dt_min_samples_leaf", 1, 183, log=True),
        min_samples_split=trial.suggest_int("dt_min_samples_split", 2, 404, log=True),
        random_state=seed)


def _random_forest(trial, profile, seed):
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(
        n_estimators=trial.suggest_int("rf_n_estimators", 3, _cap(profile, 1588, 60), log=True),
        criterion=trial.suggest_categorical("rf_criterion", ["gini", "entropy"]),
        max_depth=trial.suggest_int("rf_max_depth", 1, _cap(profile, 59, 16)),
        max_features=trial.suggest_categorical("rf_max_features", ["sqrt", "log2"]),
        min_samples_leaf=trial.suggest_int("rf_min_samples_leaf", 1, 172, log=True),
        min_samples_split=trial.suggest_int("rf_min_samples_split", 2, 348, log=True),
        n_jobs=1, random_state=seed)


def _lightgbm(trial, profile, seed):
    from lightgbm import LGBMClassifier

    return LGBMClassifier(
        boosting_type=trial.suggest_categorical("lgbm_boosting_type", ["gbdt", "goss", "dart"]),
        n_estimators=trial.suggest_int("lgbm_n_estimators", 2, _cap(profile, 14495, 150), log=True),
        learning_rate=trial.suggest_float("lgbm_learning_rate", 0.01, 1.0, log=True),
        max_depth=trial.suggest_int("lgbm_max_depth", 2, _cap(profile, 543, 12), log=True),
        num_leaves=trial.suggest_int("lgbm_num_leaves", 2, _cap(profile, 755, 63), log=True),
        min_child_samples=trial.suggest_int("lgbm_min_child_samples", 2, 214, log=True),
        n_jobs=1, random_state=seed, verbose=-1)


_HIDDEN = {
    "paper": ["20", "20-20", "20-10", "50", "50-50", "50-25", "100", "100-100", "100-50",
              "200", "200-200", "200-100", "500", "500-500", "500-200"],
    "fast": ["20", "20-20", "20-10", "50", "50-50", "50-25"],
}


def _mlp(trial, profile, seed):
    hidden = trial.suggest_categorical("mlp_hidden_layers", _HIDDEN[profile])
    betas = trial.suggest_categorical("mlp_betas", ["0.9-0.999", "0.9-0.9995", "0.95-0.999", "0.95-0.9995"])
    beta_1, beta_2 = (float(b) for b in betas.split("-"))
    return WeightDecayMLP(
        hidden_layer_sizes=tuple(int(h) for h in hidden.split("-")),
        weight_decay=trial.suggest_categorical("mlp_weight_decay", [0.0, 1e-3, 1e-2]),
        batch_size=_cap(profile, 2048, 512),
        max_epochs=trial.suggest_categorical("mlp_max_epochs", _cap(profile, [25, 50, 75], [10, 20])),
        learning_rate=trial.suggest_float("mlp_lr", 5e-4, 5e-3, log=True),
        beta_1=beta_1, beta_2=beta_2, random_state=seed)


# The paper's five families, listed here rather than registered as a side effect of importing anything;
# register_family adds more (the jobs add the SCAFF forest when they tune).
FAMILIES: dict[str, Family] = {family.name: family for family in (
    Family("logistic_regression", _logistic_regression),
    Family("decision_tree", _decision_tree),
    Family("random_forest", _random_forest),
    Family("lightgbm", _lightgbm, needs_encoding=False),
    Family("mlp", _mlp),
)}
PAPER_FAMILIES = ("logistic_regression", "decision_tree", "random_forest", "lightgbm", "mlp")


def _encoder(X):
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    coded = [c for c in X.columns if str(X[c].dtype) == "category"]
    other = [c for c in X.columns if str(X[c].dtype) in ("object", "bool")]
    numeric = [c for c in X.columns if c not in coded and c not in other]
    parts = [("categorical", Pipeline([("codes", CategoryCodes()), ("one_hot", OneHotEncoder(handle_unknown="ignore"))]),
              coded)]
    if other:
        parts.append(("text", OneHotEncoder(handle_unknown="ignore"), other))
    return ColumnTransformer([*parts, ("numeric", StandardScaler(), numeric)])


def make_model(trial, *, profile: str = "fast", families: Sequence[str] | None = None, seed: int = 0,
               X_example=None):
    """Suggest a family and its hyperparameters; return an unfitted scikit-learn pipeline.

    Families that need it get one-hot encoding of categorical columns and scaling of numeric ones
    (``X_example`` decides which columns are which; pandas category/object/bool = categorical).
    """
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    names = list(PAPER_FAMILIES if families is None else families)
    unknown = [n for n in names if n not in FAMILIES]
    if not names or unknown:
        raise ValueError(f"families must be a non-empty list from {sorted(FAMILIES)}, got {names!r}")
    from sklearn.pipeline import Pipeline

    name = trial.suggest_categorical("model", names) if len(names) > 1 else names[0]
    family = FAMILIES[name]
    estimator = family.suggest(trial, profile, seed)
    steps = []
    if family.needs_encoding and X_example is not None:
        steps.append(("encode", _encoder(X_example)))
    steps.append((name, estimator))
    return Pipeline(steps)
