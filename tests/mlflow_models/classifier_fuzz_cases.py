"""Edited copies of saved classifiers of every tuning family, for tests/mlflow_models/test_model_fuzz.py.

Each family of the tuning table (logistic regression, decision tree, random forest, LightGBM, MLP,
SCAFF forest on columns, and the two bias reductions, over a tree and over LightGBM) is fitted small, saved
with the classifier flavor, then edited where its compiled or numeric code reads it: scikit-learn tree nodes
(children pointing at themselves, the root, their parent, out of range; features out of range; thresholds and
values not finite),
LightGBM's model text (children, features, thresholds, leaf counts, tree sizes), MLP and linear
weights (wrong shapes, NaN), SCAFF node arrays, a reduction's predictor weights (not summing to 1,
negative, NaN, one short) and predictors (replaced by a non-classifier, dropped); the edits of a tree or
LightGBM reach a reduction's predictors too. Two HistGradientBoosting models as one fits them oneself
(in a one-hot Pipeline, and with native category splits) get their TreePredictor nodes edited the same
way (children, features, thresholds, values, bitsets, category splits) and what predict hands those
(known categories, the category encoder, the list of trees); each of these edits must be refused, naming
the TreePredictor or the model. Every everyday preprocessing step of scikit-learn
(tests/mlflow_models/preprocessing_cases.py) gets its fitted arrays and lists edited (a NaN, an entry
short, transposed, a zero, an index out of range, categories out of order, an entry of a list dropped). Every
family's file is also edited into reference graphs (:mod:`tests.mlflow_models.skops_graph_attacks`: fan-out,
depth, cycles, an array file read many times; a forest of one shared tree; a reduction of reductions, shared or
written out), each refused by the budget of :mod:`fairops.mlflow._parse_budget` or the reduction's checks, by
name, in bounded time. The edited model is written back with skops (or its schema rewritten), as a holder of
the files could, and the directory re-sealed.
"""

import io
import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import skops.io

from fairops.mlflow import classifier, sealing
from fairops.models import SCAFFOnColumns
from fairops.tuning._search_space import FAMILIES
from tests.fair_data import biased_rows
from tests.mlflow_models import skops_graph_attacks as graph_attacks
from tests.mlflow_models.npz_bombs import add_deflated_zeros

SMALL = {
    "logistic_regression": {"lr_C": 1.0, "lr_penalty": "l2", "lr_tol": 1e-3, "lr_max_iter": 120},
    "decision_tree": {"dt_criterion": "gini", "dt_max_depth": 4, "dt_min_samples_leaf": 5, "dt_min_samples_split": 10},
    "random_forest": {"rf_n_estimators": 3, "rf_criterion": "gini", "rf_max_depth": 3, "rf_max_features": "sqrt",
                      "rf_min_samples_leaf": 5, "rf_min_samples_split": 10},
    "lightgbm": {"lgbm_boosting_type": "gbdt", "lgbm_n_estimators": 3, "lgbm_learning_rate": 0.3,
                 "lgbm_max_depth": 3, "lgbm_num_leaves": 4, "lgbm_min_child_samples": 10},
    "mlp": {"mlp_hidden_layers": "20-10", "mlp_betas": "0.9-0.999", "mlp_weight_decay": 0.0, "mlp_max_epochs": 10,
            "mlp_lr": 1e-3},
}
_RATIO = {"ratio_bound": 0.9, "ratio_bound_slack": 0.01, "fp_cost": 0.6}
REDUCTIONS = {
    "exponentiated_gradient": {"eg_base": "decision_tree", **{f"eg_{k}": v for k, v in _RATIO.items()}, "eg_eps": 0.1,
                               "eg_max_iter": 10, **SMALL["decision_tree"]},
    "grid_search": {"gs_base": "lightgbm", **{f"gs_{k}": v for k, v in _RATIO.items()}, "gs_grid_size": 5,
                    "gs_grid_limit": 2.0, "gs_constraint_weight": 0.5, **SMALL["lightgbm"]},
}


def fit_families():
    """``{family: (fitted pipeline, X)}`` for every family of the tuning table."""
    import optuna

    from fairops.tuning._search_space import fit_model, make_model

    X, y, s = biased_rows(3, n_rows=240, n_features=3)
    X = X.assign(sex=(s == "m").astype(float))
    fitted = {}
    for family, params in SMALL.items():
        trial = optuna.trial.FixedTrial(params)
        fitted[family] = (make_model(trial, families=[family], X_example=X, sensitive_columns=["sex"]).fit(X, y), X)
    scaff = SCAFFOnColumns(sensitive_columns=("sex",), n_estimators=3, max_depth=3, theta=0.3, random_state=0)
    fitted["scaff_forest"] = (scaff.fit(X, y), X)
    for family, params in REDUCTIONS.items():
        model = make_model(optuna.trial.FixedTrial(params), families=[family], X_example=X, task=_task())
        fitted[family] = (fit_model(model, X, y, pd.DataFrame({"sex": s})), X)
    assert set(fitted) == set(FAMILIES), sorted(set(FAMILIES) - set(fitted))
    return fitted


def fit_own_models():
    """``{name: (fitted model, X)}``: HistGradientBoosting models as one fits them outside tuning, in a
    Pipeline of one-hot categories and scaled numbers, and on its own with its native category splits."""
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    X, y, s = biased_rows(4, n_rows=240, n_features=3)
    X = X.assign(sex=pd.Categorical(s))
    encode = ColumnTransformer([("categories", OneHotEncoder(handle_unknown="ignore"), ["sex"]),
                                ("numbers", StandardScaler(), ["a", "b", "c"])])
    boosting = {"max_iter": 4, "max_leaf_nodes": 6, "random_state": 0}
    pipeline = Pipeline([("encode", encode), ("model", HistGradientBoostingClassifier(**boosting))])
    native = HistGradientBoostingClassifier(categorical_features="from_dtype", **boosting)
    return {"own_hist_gradient_boosting": (pipeline.fit(X, y), X),
            "own_hist_gradient_boosting_categories": (native.fit(X, y), X)}


def _task():
    from fairops.metrics import Task

    return Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["sex"])


def _tree_edits(tree):
    """(label, edit(state)) on a scikit-learn tree's nodes: children, feature, threshold, value."""
    nodes = tree.__getstate__()["nodes"]
    inner = np.flatnonzero(nodes["left_child"] >= 0)
    node = int(inner[-1])
    parent = int(np.flatnonzero((nodes["left_child"] == node) | (nodes["right_child"] == node))[0]) if node else 0

    def set_field(field, value, at=node):
        def edit(state):
            state["nodes"][field][at] = value
        return edit

    yield "left child points at itself", set_field("left_child", node)
    yield "right child points at the root", set_field("right_child", 0)
    yield "left child points at its parent", set_field("left_child", parent)
    yield "left child out of range", set_field("left_child", 10**6)
    yield "right child -7", set_field("right_child", -7)
    yield "leaf given one child", set_field("left_child", 1, at=int(np.flatnonzero(nodes["left_child"] < 0)[0]))
    yield "feature out of range", set_field("feature", 999)
    yield "feature -5", set_field("feature", -5)
    yield "threshold nan", set_field("threshold", np.nan)

    def nan_value(state):
        state["values"][0] = np.nan
    yield "value nan", nan_value


def _find(model, kind):
    stack, seen = [model], set()
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, kind):
            return value
        if isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif hasattr(value, "__dict__") and type(value).__module__.split(".")[0] in ("sklearn", "fairops"):
            stack.extend(vars(value).values())
    return None


def object_edits(model_bytes: bytes):
    """(label, edited skops bytes) made on the loaded model and dumped again."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.tree import DecisionTreeClassifier

    from fairops.reductions._base import ReductionBase
    from fairops.scaff import SCAFFClassifier

    def fresh():
        return skops.io.loads(model_bytes, trusted=list(classifier.TRUSTED_TYPES))

    probe = fresh()
    if _find(probe, DecisionTreeClassifier) is not None:
        for label, edit in _tree_edits(_find(probe, DecisionTreeClassifier).tree_):
            model = fresh()
            tree = _find(model, DecisionTreeClassifier).tree_
            state = tree.__getstate__()
            state = {**state, "nodes": state["nodes"].copy(), "values": state["values"].copy()}
            edit(state)
            tree.__setstate__(state)
            yield f"tree: {label}", skops.io.dumps(model)
    edits = []
    if _find(probe, MLPClassifier) is not None:
        edits += [("mlp: layer 1 weights transposed", MLPClassifier, lambda m: m.coefs_.__setitem__(1, m.coefs_[1].T)),
                  ("mlp: first layer dropped", MLPClassifier, lambda m: m.coefs_.pop(0)),
                  ("mlp: intercepts one longer", MLPClassifier,
                   lambda m: m.intercepts_.__setitem__(0, np.append(m.intercepts_[0], 1.0))),
                  ("mlp: weight nan", MLPClassifier, lambda m: m.coefs_[0].__setitem__((0, 0), np.nan)),
                  ("mlp: n_layers_ 9", MLPClassifier, lambda m: setattr(m, "n_layers_", 9))]
    if _find(probe, LogisticRegression) is not None:
        edits += [("linear: coef nan", LogisticRegression, lambda m: m.coef_.__setitem__((0, 0), np.nan)),
                  ("linear: coef one column short", LogisticRegression, lambda m: setattr(m, "coef_", m.coef_[:, :-1])),
                  ("linear: intercept inf", LogisticRegression, lambda m: m.intercept_.__setitem__(0, np.inf))]
    if _find(probe, SCAFFClassifier) is not None:
        edits += [("scaff: child points at itself", SCAFFClassifier, lambda m: m.node_left_.__setitem__(0, 0)),
                  ("scaff: feature out of range", SCAFFClassifier, lambda m: m.node_feature_.__setitem__(0, 99))]
    reduction = _find(probe, ReductionBase)
    if reduction is not None:
        edits += [("reduction: weights sum to 2", ReductionBase, lambda m: setattr(m, "weights_", 2 * m.weights_)),
                  ("reduction: a weight negative", ReductionBase, lambda m: m.weights_.__setitem__(0, -1.0)),
                  ("reduction: a weight nan", ReductionBase, lambda m: m.weights_.__setitem__(0, np.nan)),
                  ("reduction: weights one short", ReductionBase, lambda m: setattr(m, "weights_", m.weights_[:-1])),
                  ("reduction: no predictors", ReductionBase,
                   lambda m: (setattr(m, "predictors_", []), setattr(m, "weights_", np.zeros(0)))),
                  ("reduction: a predictor replaced by its classes", ReductionBase,
                   lambda m: m.predictors_.__setitem__(0, m.classes_.copy())),
                  ("reduction: classes equal", ReductionBase, lambda m: setattr(m, "classes_", np.array([1, 1])))]
    for label, kind, edit in edits:
        model = fresh()
        edit(_find(model, kind))
        yield label, skops.io.dumps(model)


def _predictor_edits(nodes):
    """(label, edit(predictor)) on a HistGradientBoosting TreePredictor's nodes and bitsets."""
    inner = np.flatnonzero(nodes["is_leaf"] == 0)
    node, leaf = int(inner[-1]), int(np.flatnonzero(nodes["is_leaf"] != 0)[0])
    parent = int(np.flatnonzero((nodes["left"] == node) | (nodes["right"] == node))[0]) if node else 0

    def set_field(field, value, at=node):
        return lambda predictor: predictor.nodes[field].__setitem__(at, value)

    yield "left child out of range", set_field("left", 10**6)
    yield "left child points at itself", set_field("left", node)
    yield "right child points at the root", set_field("right", 0)
    yield "left child points at its parent", set_field("left", parent)
    yield "a leaf made an inner node", set_field("is_leaf", 0, at=leaf)
    yield "feature out of range", set_field("feature_idx", 999)
    yield "feature -5", set_field("feature_idx", -5)
    yield "threshold nan", set_field("num_threshold", np.nan)
    yield "value inf", set_field("value", np.inf, at=leaf)
    yield "bitsets one word short", lambda predictor: setattr(
        predictor, "raw_left_cat_bitsets", np.zeros((1, 7), dtype=np.uint32))


def _category_edits(nodes):
    """(label, edit(predictor or model)) on what the native category splits read; None without such splits."""
    split = np.flatnonzero((nodes["is_leaf"] == 0) & (nodes["is_categorical"] != 0))
    numeric = np.flatnonzero((nodes["is_leaf"] == 0) & (nodes["is_categorical"] == 0))
    if len(split):
        yield "category split's bitset out of range", "predictor", lambda predictor: predictor.nodes[
            "bitset_idx"].__setitem__(int(split[0]), 99)
    if len(numeric):
        yield "a number split read as categories", "predictor", lambda predictor: predictor.nodes[
            "is_categorical"].__setitem__(int(numeric[0]), 1)

    def category_300(model):
        feature = int(np.flatnonzero(model._bin_mapper.is_categorical_)[0])
        model._bin_mapper.bin_thresholds_[feature] = np.array([0.0, 300.0])

    def drop_a_column(model):
        name, step, mask = model._preprocessor.transformers_[0]
        model._preprocessor.transformers_[0] = (name, step, mask & (np.cumsum(mask) > 1))

    yield "a known category 300", "model", category_300
    yield "its category encoder drops a column", "model", drop_a_column


def hist_gradient_boosting_edits(model_bytes: bytes):
    """(label, edited skops bytes, what the refusal names) for a model holding a HistGradientBoosting model."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    def fresh():
        model = skops.io.loads(model_bytes, trusted=list(classifier.TRUSTED_TYPES))
        return model, _find(model, HistGradientBoostingClassifier)

    _, probe = fresh()
    if probe is None:
        return
    nodes = probe._predictors[0][0].nodes
    edits = [(label, "predictor", edit) for label, edit in _predictor_edits(nodes)]
    if vars(probe).get("_preprocessor") is not None:
        edits += list(_category_edits(nodes))
    edits.append(("an iteration's trees dropped", "model", lambda model: model._predictors.__setitem__(0, [])))
    edits.append(("an unchecked TreePredictor beside the model", "model", _spare_predictor))
    for label, target, edit in edits:
        model, boosting = fresh()
        edit(boosting._predictors[0][0] if target == "predictor" else boosting)
        named = "TreePredictor" if "TreePredictor" in label or target == "predictor" \
            else "HistGradientBoostingClassifier"
        yield f"hist gradient boosting: {label}", skops.io.dumps(model), named


def _spare_predictor(model):
    """A copy of a tree held where no HistGradientBoosting model reads (and checks) it."""
    from sklearn.ensemble._hist_gradient_boosting.predictor import TreePredictor

    tree = model._predictors[0][0]
    model.spare_ = TreePredictor(tree.nodes.copy(), tree.binned_left_cat_bitsets, tree.raw_left_cat_bitsets)


def _with_schema(model_bytes: bytes, change) -> bytes:
    """The skops archive with its schema.json rewritten by ``change(schema)``."""
    source = zipfile.ZipFile(io.BytesIO(model_bytes))
    target = io.BytesIO()
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as out:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "schema.json":
                schema = json.loads(data)
                change(schema)
                data = json.dumps(schema).encode()
            out.writestr(info.filename, data)
    return target.getvalue()


def _booster_handle(schema):
    stack = [schema]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if value.get("__class__") == "Booster":
                return value["content"]["content"]["_handle"]
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return None


def _retext(text: str, field: str, values: str, fix_sizes: bool = True) -> str:
    """Tree 0's ``field`` line replaced, then ``tree_sizes`` recomputed so the edit reaches the tree check."""
    head, _, rest = text.partition("\nTree=0\n")
    block, _, tail = rest.partition("\nTree=1\n") if "\nTree=1\n" in rest else rest.partition("end of trees")
    lines = [f"{field}={values}" if line.startswith(f"{field}=") else line for line in block.split("\n")]
    separator = "\nTree=1\n" if "\nTree=1\n" in rest else "end of trees"
    edited = head + "\nTree=0\n" + "\n".join(lines) + separator + tail
    if not fix_sizes:
        return edited
    trees = edited[edited.index("Tree=0"): edited.index("end of trees")]
    sizes = [len("Tree=" + part) for part in trees.split("Tree=")[1:]]
    header = [f"tree_sizes={' '.join(map(str, sizes))}" if line.startswith("tree_sizes=") else line
              for line in edited[: edited.index("Tree=0")].split("\n")]
    return "\n".join(header) + edited[edited.index("Tree=0"):]


def booster_edits(model_bytes: bytes):
    """(label, edited skops bytes) with tree 0 of a LightGBM model text changed."""
    handle = _booster_handle(json.loads(zipfile.ZipFile(io.BytesIO(model_bytes)).read("schema.json")))
    if handle is None:
        return
    text = json.loads(handle["content"])
    fields = dict(line.split("=", 1) for line in text.split("\nTree=0\n")[1].split("\n\n")[0].split("\n"))
    n_inner = int(fields["num_leaves"]) - 1
    edits = {
        "left_child points at the root": ("left_child", " ".join(["0"] * n_inner)),
        "right_child out of range": ("right_child", " ".join(["99"] * n_inner)),
        "left_child names leaf 99": ("left_child", " ".join(["-100"] * n_inner)),
        "split_feature 99": ("split_feature", " ".join(["99"] * n_inner)),
        "threshold nan": ("threshold", " ".join(["nan"] * n_inner)),
        "leaf_value inf": ("leaf_value", " ".join(["inf"] * (n_inner + 1))),
        "num_leaves 200": ("num_leaves", "200"),
        "categorical split without bitsets": ("decision_type", " ".join(["1"] * n_inner)),
    }
    for label, (field, values) in edits.items():
        new = _retext(text, field, values)
        yield f"lightgbm: {label}", _with_schema(model_bytes, lambda s, t=new: _booster_handle(s).update(
            content=json.dumps(t)))
    wrong = _retext(text, "num_cat", "0", fix_sizes=False).replace("tree_sizes=", "tree_sizes=1")
    yield "lightgbm: tree_sizes wrong", _with_schema(model_bytes, lambda s: _booster_handle(s).update(
        content=json.dumps(wrong)))


def fit_preprocessing_models():
    """``{case: (fitted Pipeline, new rows)}`` of every everyday preprocessing step."""
    from tests.mlflow_models.preprocessing_cases import CASES, fitted

    models = {}
    for case in CASES:
        model, _, new = fitted(case, n=200)
        models[case] = (model, new)
    return models


_MAX_ARRAYS = 6  # fitted arrays edited per step
_STEP_MODULES = ("sklearn.preprocessing", "sklearn.impute", "sklearn.compose", "sklearn.feature_selection",
                 "sklearn.decomposition")


def _array_edits(array: np.ndarray):
    """(label, edited array) of one fitted array of a step."""
    if array.dtype.kind == "f" and array.size:
        for label, value in (("a NaN", np.nan), ("a zero", 0.0)):
            edited = array.copy()
            edited.flat[0] = value
            yield label, edited
    if array.dtype.kind in "iu" and array.size:
        for label, value in (("an index 10**6", 10**6), ("an index -1", -1)):
            edited = array.astype(np.int64)
            edited.flat[0] = value
            yield label, edited
    if array.ndim >= 1 and len(array) > 1:
        yield "one entry short", array[:-1]
    if array.ndim == 2 and array.shape[0] != array.shape[1]:
        yield "transposed", np.ascontiguousarray(array.T)


def _step_edits(step):
    """(label, edit(step)) on a fitted preprocessing step's own arrays and lists."""
    arrays = [(name, value) for name, value in vars(step).items()
              if name.endswith("_") and isinstance(value, np.ndarray) and value.dtype.kind in "biuf"]
    for name, value in arrays[:_MAX_ARRAYS]:
        for label, edited in _array_edits(value):
            yield f"{name}: {label}", lambda s, n=name, e=edited: setattr(s, n, e)
    for name, value in vars(step).items():
        if name.endswith("_") and isinstance(value, list) and len(value) > 1:
            yield f"{name}: an entry dropped", lambda s, n=name: setattr(s, n, getattr(s, n)[:-1])
    categories = vars(step).get("categories_")
    if isinstance(categories, list) and categories and len(categories[0]) > 1:
        yield "categories_[0] out of order", lambda s: s.categories_.__setitem__(0, s.categories_[0][::-1].copy())
    indices = vars(step).get("_transformer_to_input_indices")
    if isinstance(indices, dict) and indices:
        first = next(iter(indices))
        yield "a part reads column 10**6", lambda s, k=first: s._transformer_to_input_indices.__setitem__(
            k, np.array([10**6]))


def _preprocessing_steps(model) -> list[tuple]:
    """Where the fitted preprocessing steps of scikit-learn sit in ``model``: paths of ``("attribute", name)``
    and ``("item", key)`` hops, in a fixed order."""
    found, stack, seen = [], [((), model)], set()
    while stack:
        path, value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, (list, tuple)):
            stack.extend((path + (("item", i),), item) for i, item in enumerate(value))
        elif isinstance(value, dict):
            stack.extend((path + (("item", key),), item) for key, item in value.items())
        elif hasattr(value, "__dict__") and type(value).__module__.startswith("sklearn"):
            if type(value).__module__.startswith(_STEP_MODULES):
                found.append(path)
            stack.extend((path + (("attribute", name),), item) for name, item in vars(value).items())
    return sorted(found, key=str)


def _at(model, path: tuple):
    for hop, key in path:
        model = getattr(model, key) if hop == "attribute" else model[key]
    return model


def preprocessing_edits(model_bytes: bytes):
    """(label, edited skops bytes) with one fitted array or list of one preprocessing step edited."""
    def fresh():
        return skops.io.loads(model_bytes, trusted=list(classifier.TRUSTED_TYPES))

    for path in _preprocessing_steps(fresh()):
        where = "".join(f".{key}" if hop == "attribute" else f"[{key!r}]" for hop, key in path)
        for label, edit in _step_edits(_at(fresh(), path)):
            model = fresh()
            step = _at(model, path)
            edit(step)
            yield f"{type(step).__name__} at model{where}: {label}", skops.io.dumps(model)


def graph_edits(model_bytes: bytes):
    """(label, edited skops bytes, what the refusal names): reference graphs (fan-out, depth, cycles, one array
    file read many times), and where the model has them, a forest of one tree shared many times and a reduction
    of reductions (shared, and written out in full)."""
    yield "graph: 30 references to 30 references, six levels", graph_attacks.nested_lists(model_bytes), "unfold"
    yield "graph: lists 300 deep", graph_attacks.deep_list(model_bytes, 300), "levels deep"
    yield "graph: a list holding itself", graph_attacks.cycle(model_bytes), "reference cycle"
    yield "graph: one array file read by 50 states", graph_attacks.shared_array_file(model_bytes, 50), "array file"
    schema, _ = graph_attacks.read_schema(model_bytes)
    text = json.dumps(schema)
    if '"RandomForestClassifier"' in text:
        yield "graph: a forest of 2,000 references to one tree", graph_attacks.wide_forest(model_bytes, 2000), "unfold"
    if '"fairops.reductions.' in text:
        yield ("graph: a reduction of 300 references to a reduction", graph_attacks.nested_reduction(model_bytes, 300),
               "unfold")
        yield ("nested: a reduction whose predictor is a reduction, written out",
               graph_attacks.nested_reduction(model_bytes, 1), "never a reduction")


def build_classifier_cases(base: Path, folder: Path, family: str, steps: bool = False) -> list[dict]:
    """Every edited copy of the classifier saved at ``base``: ``[{"id", "path", "array", "expect", "kind"}]``
    (with ``steps``, the edits of its preprocessing steps too)."""
    model_bytes = (base / "data" / classifier.MODEL_FILE).read_bytes()
    cases = []

    def add(label, data, expect="refused or finite"):
        path = folder / f"{family}-{len(cases)}"
        shutil.copytree(base, path)
        (path / "data" / classifier.MODEL_FILE).write_bytes(data)
        sealing.seal(path)
        cases.append({"id": f"{family}: {label}", "path": str(path), "array": classifier.MODEL_FILE,
                      "expect": expect, "kind": "classifier"})

    add("original", model_bytes, expect="original")
    for label, data in [*object_edits(model_bytes), *booster_edits(model_bytes)]:
        add(label, data)
    for label, data in preprocessing_edits(model_bytes) if steps else ():
        add(label, data)
    for label, data, named in hist_gradient_boosting_edits(model_bytes):
        add(label, data, expect="refused")
        cases[-1]["names"] = named
    for label, data, named in graph_edits(model_bytes):
        add(label, data, expect="refused")
        cases[-1]["names"] = named
    bomb = folder / f"{family}-bomb.skops"
    bomb.write_bytes(model_bytes)
    add_deflated_zeros(bomb, "bomb", 64 << 20)
    add("64 MiB of deflated zeros", bomb.read_bytes(), expect="limit")
    return cases
