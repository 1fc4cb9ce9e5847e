"""Edited model files never take the loading process down: a clean exception or finite answers.

Small real SCAFF (tree, forest) and FairLOF models are saved with their fairops flavors. Every array
of ``data/arrays.npz`` is then edited in many ways (huge, negative, zero, NaN/inf values at the
first, middle and last entry and everywhere; child indices pointing at the node itself, its root or
its parent; truncated, empty, one entry longer, another dtype, another ndim), the model directory is
re-sealed with fairops' own manifest writers, and each edited model is loaded with fairops' loader
and used in a child process (``model_fuzz_child.py``). The child must report, for every case, a
ValueError/TypeError naming what is wrong or finite answers of the right shape; a signal, a hang
(watchdog) or any other exception fails the test, attributed to the case that did not report.
Faithful re-encodings (big-endian, Fortran order, a wider integer type) must load and answer
exactly as the original. A few file-level cases: an edit without re-sealing (refused by the
manifest), a deflated entry declaring more than the size limit, a declared size and a ``.npy``
header far past it.
"""

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairops.fairlof import FairLOF
from fairops.mlflow import (
    _model_files,
    classifier as classifier_flavor,
    fairlof as fairlof_flavor,
    scaff as scaff_flavor,
    sealing,
)
from fairops.scaff import SCAFFClassifier, SCAFFTreeClassifier
from tests.fair_data import biased_rows
from tests.mlflow_models.classifier_fuzz_cases import (
    build_classifier_cases,
    fit_families,
    fit_own_models,
    fit_preprocessing_models,
)
from tests.mlflow_models.npz_bombs import add_deflated_zeros, add_lying_header, declare_size

pytestmark = pytest.mark.slow

CHILD = Path(__file__).with_name("model_fuzz_child.py")
LIMIT = 16 << 20  # FAIROPS_MAX_ARRAY_BYTES in the children: far above these models, far below the bombs
READY_SECONDS = 240  # a child imports MLflow before its first case, on a busy machine
CASE_SECONDS = 20
MAX_RESTARTS = 40

INT_VALUES = {"huge": 2**40, "huge negative": -(2**40), "-1": -1, "-7": -7, "zero": 0, "int32 max": 2**31 - 1,
              "2**32 + 1 (wraps to 1)": 2**32 + 1}
FLOAT_VALUES = {"huge": 1e308, "huge negative": -1e308, "-1": -1.0, "zero": 0.0, "nan": np.nan, "inf": np.inf,
                "-inf": -np.inf, "subnormal": 5e-324}


def _fits(value, dtype) -> bool:
    info = np.iinfo(dtype)
    return info.min <= value <= info.max


def value_edits(array: np.ndarray):
    """(label, edited array): each value at the first, middle and last entry, then everywhere."""
    if array.dtype.kind in "iu":
        values = INT_VALUES
    elif array.dtype.kind == "f":
        values = FLOAT_VALUES
    else:
        return
    if array.size == 0:
        return
    positions = sorted({0, array.size // 2, array.size - 1})
    for label, value in values.items():
        dtype = array.dtype if array.dtype.kind == "f" or _fits(value, array.dtype) else np.int64
        for position in positions:
            edited = array.astype(dtype)
            edited.flat[position] = value
            yield f"{label} at {position}", edited
        yield f"{label} everywhere", np.full(array.shape, value, dtype=dtype)


def shape_edits(array: np.ndarray):
    """(label, edited array or None to drop it): wrong lengths, dtypes and ndim."""
    yield "dropped", None
    yield "truncated", array[:-1]
    yield "empty", array[:0]
    yield "one entry longer", np.concatenate([array, array[-1:]])
    yield "another ndim", array.reshape(-1, 1) if array.ndim == 1 else array.ravel()
    yield "0-d", array.ravel()[:1].reshape(())
    if array.ndim == 2:
        yield "transposed", np.ascontiguousarray(array.T)
    yield "as float" if array.dtype.kind != "f" else "as int", array.astype(
        np.float64 if array.dtype.kind != "f" else np.int64)
    yield "as bool", array.astype(bool)
    yield "as text", array.astype(str)


def faithful_edits(array: np.ndarray):
    """(label, array): the same values, encoded otherwise; the model must answer exactly as before."""
    if array.dtype.kind in "iuf":
        yield "big-endian", array.astype(array.dtype.newbyteorder(">"))
    if array.ndim == 2:
        yield "Fortran order", np.asfortranarray(array)
    if array.dtype.kind in "iu" and array.dtype != np.int64:
        yield "as int64", array.astype(np.int64)


def child_edits(arrays: dict):
    """(array name, label, edited): children of internal nodes pointing at themselves, the root, the parent."""
    feature, offsets = arrays["node_feature_"], arrays["node_offsets_"]
    internal = np.flatnonzero(feature >= 0)
    tree_of = np.searchsorted(offsets, np.arange(len(feature)), side="right") - 1
    for node in sorted({internal[0], internal[len(internal) // 2], internal[-1]}):
        start = offsets[tree_of[node]]
        local = node - start
        for name in ("node_left_", "node_right_"):
            parents = np.flatnonzero((arrays["node_left_"] == local) | (arrays["node_right_"] == local))
            parents = parents[(parents >= start) & (tree_of[parents] == tree_of[node])]
            targets = {"itself": local, "its root": 0, "its sibling (shared child)": None}
            if len(parents):
                targets["its parent"] = parents[0] - start
            for label, target in targets.items():
                edited = arrays[name].copy()
                other = "node_right_" if name == "node_left_" else "node_left_"
                edited[node] = arrays[other][node] if target is None else target
                yield name, f"node {node} points at {label}", edited


def _fit_models():
    X, y, s = biased_rows(11, n_rows=300, n_features=3)
    tree = SCAFFTreeClassifier(theta=0.3, max_depth=5).fit(X, y, sensitive_features=s)
    forest = SCAFFClassifier(n_estimators=4, theta=0.3, max_depth=4, random_state=0).fit(X, y, sensitive_features=s)
    frame = X.iloc[:120].rename(columns={"a": "x1", "b": "x2", "c": "x3"})
    sex = pd.DataFrame({"sex": s[:120]})
    detector = FairLOF(n_neighbors=6, correction_strength=0.4, novelty=True).fit(frame.to_numpy(),
                                                                                 sensitive_features=sex)
    new_rows = frame.iloc[:40] + 0.05
    return {
        "scaff-tree": (scaff_flavor, tree, X.head(3), {"kind": "scaff", "rows": X.iloc[:60]}),
        "scaff-forest": (scaff_flavor, forest, X.head(3), {"kind": "scaff", "rows": X.iloc[:60]}),
        "fairlof": (fairlof_flavor, detector, pd.concat([frame, sex], axis=1).head(3),
                    {"kind": "fairlof", "rows": new_rows, "sensitive": sex.iloc[:40]}),
    }


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fuzz-models")
    os.environ.pop(sealing.KEY_ENV, None)
    saved = {}
    for kind, (flavor, model, example, plan) in _fit_models().items():
        path = folder / kind
        flavor.save_model(model, path, input_example=example, pip_requirements=[])
        plan = {key: value.to_dict(orient="split") if isinstance(value, pd.DataFrame) else value
                for key, value in plan.items()}
        for key in ("rows", "sensitive"):
            if key in plan:
                plan[key].pop("index", None)
        saved[kind] = (path, plan)
    return saved


def _edited_copy(base: Path, target: Path, arrays: dict | None, reseal: bool = True, extra=None) -> None:
    shutil.copytree(base, target)
    npz = target / "data" / _model_files.ARRAYS_FILE
    if arrays is not None:
        np.savez(npz, **arrays)
    if extra is not None:
        extra(npz)
    if reseal:
        _model_files.write_manifest(target / "data")
        sealing.seal(target)


def build_cases(base: Path, folder: Path) -> list[dict]:
    """Every edited copy of the model at ``base`` under ``folder``: ``[{"id", "path", "array", "expect"}]``."""
    with np.load(base / "data" / _model_files.ARRAYS_FILE) as archive:
        original = {name: archive[name] for name in archive.files}
    cases = []

    def add(array, label, arrays=None, expect="refused or finite", **options):
        path = folder / f"case-{len(cases)}"
        _edited_copy(base, path, arrays, **options)
        cases.append({"id": f"{array}: {label}", "path": str(path), "array": array, "expect": expect})

    add("-", "original", expect="original")
    for name, array in original.items():
        edits = [*value_edits(array), *shape_edits(array)]
        for label, edited in edits:
            arrays = {key: value for key, value in original.items() if key != name}
            if edited is not None:
                arrays[name] = edited
            add(name, label, arrays)
        for label, edited in faithful_edits(array):
            add(name, label, {**original, name: edited}, expect="original")
    if "node_left_" in original:
        for name, label, edited in child_edits(original):
            add(name, label, {**original, name: edited})
    add("planted", "an array the model does not know", {**original, "planted": np.zeros(3)})
    first = next(iter(original))
    add(first, "edited without re-sealing", {**original, first: original[first][:-1]}, expect="manifest",
        reseal=False)
    add("bomb", "64 MiB of deflated zeros", extra=lambda npz: add_deflated_zeros(npz, "bomb", 64 << 20),
        expect="limit")
    add(first, "declares 3 GiB", extra=lambda npz: declare_size(npz, first, 3 << 30), expect="limit")
    add("lie", "header claims 2**40 entries", extra=lambda npz: add_lying_header(npz, "lie", (2**40,)),
        expect="limit")
    return cases


def _read_lines(stream, lines: queue.Queue) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


def run_cases(plan: dict, plan_path: Path, log_path: Path) -> dict:
    """``{case id: report}`` from child processes; a case that crashes or hangs its child is reported as such."""
    env = {key: value for key, value in os.environ.items() if key != sealing.KEY_ENV}
    env[_model_files.MAX_ARRAY_BYTES_ENV] = str(LIMIT)
    cases, reports, first, restarts = plan["cases"], {}, 0, 0
    while first < len(cases):
        with open(log_path, "a") as log:
            child = subprocess.Popen([sys.executable, str(CHILD), str(plan_path), str(first)], stdout=subprocess.PIPE,
                                     stderr=log, text=True, env=env, start_new_session=True)
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=_read_lines, args=(child.stdout, lines), daemon=True).start()
        position, timeout = first, READY_SECONDS
        while True:
            try:
                line = lines.get(timeout=timeout)
            except queue.Empty:
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()
                reports[cases[position]["id"]] = {"outcome": f"hang (no answer within {timeout} s)"}
                break
            if line is None:
                code = child.wait()
                if position < len(cases):
                    reports[cases[position]["id"]] = {"outcome": f"child died (return code {code})"}
                elif code != 0:
                    reports["(after the last case)"] = {"outcome": f"child exited with return code {code}"}
                break
            report = json.loads(line)
            if "id" in report:
                reports[report["id"]] = report
                position += 1
            # the first case also imports what loading needs (skops, LightGBM ...): it gets the import time
            timeout = CASE_SECONDS if "id" in report else READY_SECONDS
        first = position + 1
        restarts += position < len(cases)
        assert restarts <= MAX_RESTARTS, f"children died or hung {restarts} times; see {log_path}"
    return reports


def _failures(cases: list[dict], reports: dict, names: set) -> list[str]:
    found = []
    for case in cases:
        original_id = case["id"].split(": ")[0] + ": original" if case.get("kind") == "classifier" else "-: original"
        original = reports.get(original_id, {})
        assert original.get("outcome") == "finite", f"the unedited model must answer: {original}"
        report = reports.get(case["id"], {"outcome": "no report"})
        outcome, message = report["outcome"], report.get("message", "")
        if case["expect"] == "original":
            ok = outcome == "finite" and report["digest"] == original["digest"]
        elif case["expect"] == "manifest":
            ok = outcome == "refused" and "manifest" in message
        elif case["expect"] == "limit":
            ok = outcome == "refused" and _model_files.MAX_ARRAY_BYTES_ENV in message
        elif case["expect"] == "refused":
            ok = outcome == "refused" and case["names"] in message
        else:
            named = any(name in message for name in names | {case["array"], _model_files.ARRAYS_FILE})
            ok = outcome == "finite" or (outcome == "refused" and named)
        if not ok:
            found.append(f"{case['id']}: {report}")
    found += [f"{case_id}: {report}" for case_id, report in reports.items() if case_id.startswith("(")]
    return found


@pytest.mark.parametrize("kind", ["scaff-tree", "scaff-forest", "fairlof"])
def test_every_edit_is_refused_cleanly_or_answered(models, kind, tmp_path):
    base, plan = models[kind]
    plan = {**plan, "cases": build_cases(base, tmp_path)}
    plan_path = tmp_path / "plan.json"
    plan_path.write_text(json.dumps(plan))
    reports = run_cases(plan, plan_path, tmp_path / "children.log")
    (tmp_path / "reports.json").write_text(json.dumps(reports, indent=1))
    with np.load(base / "data" / _model_files.ARRAYS_FILE) as archive:
        names = set(archive.files)
    failures = _failures(plan["cases"], reports, names)
    counts = pd.Series([report["outcome"] for report in reports.values()]).value_counts().to_dict()
    print(f"{kind}: {len(plan['cases'])} cases over {len(names)} arrays: {counts}")
    assert not failures, f"{len(failures)} of {len(plan['cases'])} cases failed:\n" + "\n".join(failures)


def _run_classifier_cases(models: dict, tmp_path: Path, steps: bool = False):
    """``(cases, reports, failures)`` of the fitted ``{name: (model, X)}``, run by one child (its MLflow import
    paid once) on X's first rows (each model's own with ``steps``, the edits of its preprocessing steps)."""
    os.environ.pop(sealing.KEY_ENV, None)
    cases, rows = [], None
    for number, (family, (model, X)) in enumerate(models.items()):
        base = tmp_path / f"saved-{number}"
        classifier_flavor.save_model(model, base, input_example=X.head(3), pip_requirements=[])
        built = build_classifier_cases(base, tmp_path, family, steps=steps)
        if steps:
            own = X.iloc[:40].astype(object).where(X.iloc[:40].notna(), None).to_dict(orient="split")
            own.pop("index")
            for case in built:
                case["rows"] = own
        cases += built
        rows = X.iloc[:40]
    plan = {"kind": "classifier", "rows": rows.to_dict(orient="split"), "cases": cases}
    plan["rows"].pop("index")
    plan_path = tmp_path / "plan.json"
    plan_path.write_text(json.dumps(plan))
    reports = run_cases(plan, plan_path, tmp_path / "children.log")
    (tmp_path / "reports.json").write_text(json.dumps(reports, indent=1))
    return cases, reports, _failures(cases, reports, {classifier_flavor.MODEL_FILE})


def test_every_tuning_family_refuses_edited_state_cleanly(tmp_path):
    cases, reports, failures = _run_classifier_cases(fit_families(), tmp_path)
    counts = pd.Series([report["outcome"] for report in reports.values()]).value_counts().to_dict()
    print(f"classifiers: {len(cases)} cases: {counts}")
    assert counts.get("refused", 0) >= len(cases) * 0.8  # the edits above are meant to be refused
    assert not failures, f"{len(failures)} of {len(cases)} cases failed:\n" + "\n".join(failures)


def test_preprocessing_steps_refuse_edited_state_cleanly(tmp_path):
    """Every everyday preprocessing step of scikit-learn in a Pipeline: each edit of its fitted arrays and
    lists is refused naming the model file, or the model still answers finite probabilities."""
    cases, reports, failures = _run_classifier_cases(fit_preprocessing_models(), tmp_path, steps=True)
    counts = pd.Series([report["outcome"] for report in reports.values()]).value_counts().to_dict()
    print(f"preprocessing steps: {len(cases)} cases: {counts}")
    assert len(cases) > 300 and counts.get("refused", 0) > len(cases) / 2
    assert not failures, f"{len(failures)} of {len(cases)} cases failed:\n" + "\n".join(failures)


def test_hist_gradient_boosting_models_of_ones_own_refuse_edited_trees_by_name(tmp_path):
    """A HistGradientBoosting model one fits oneself (the Pipeline, and native category splits): every edit
    of its TreePredictor nodes or of what predict hands them is refused, naming the TreePredictor or model."""
    cases, _, failures = _run_classifier_cases(fit_own_models(), tmp_path)
    assert len([case for case in cases if case["expect"] == "refused"]) >= 25, [case["id"] for case in cases]
    assert not failures, f"{len(failures)} of {len(cases)} cases failed:\n" + "\n".join(failures)
