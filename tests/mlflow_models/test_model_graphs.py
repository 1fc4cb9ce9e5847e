"""Model files whose size says little of the work they make: refused by the parse budget, in bounded time.

A classifier is saved with its flavor, its skops file edited into a reference graph (see
:mod:`tests.mlflow_models.skops_graph_attacks`) as a writer of the artifact store could, the model directory
re-sealed, and loaded with fairops' loader, in a child process with a watchdog where the file made the loader of
the time hang. Each refusal names the file and what is over the budget; the unedited files still load and answer
as before. Reductions hold base predictors only, and their predictors' nodes are capped.
"""

import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import yaml
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression

from fairops.mlflow import classifier, loader, sealing
from fairops.mlflow.sealing import ModelFilesError
from fairops.reductions import ExponentiatedGradient, _state_checks as reduction_checks
from tests.fair_data import biased_rows
from tests.mlflow_models import skops_graph_attacks as attacks

WATCHDOG_SECONDS = 120  # the loader of the time was still inside skops' audit after 60 s on the first case


def _rows(n=200):
    X, y, s = biased_rows(5, n_rows=n, n_features=3)
    return X.assign(age=np.arange(n) % 50 + 20), y, s


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    X, y, s = _rows()
    folder = tmp_path_factory.mktemp("graphs")
    models = {"logistic_regression": LogisticRegression().fit(X, y),
              "random_forest": RandomForestClassifier(n_estimators=4, max_depth=3, random_state=0).fit(X, y),
              "reduction": ExponentiatedGradient(max_iter=4, random_state=0).fit(X, y, sensitive_features=s)}
    paths = {}
    for name, model in models.items():
        paths[name] = folder / name
        classifier.save_model(model, paths[name], input_example=X.head(3), pip_requirements=[])
    return paths, models, X


def _edited(base, target, edit):
    """A copy of the model directory ``base`` whose skops file is ``edit(bytes)``, sealed again."""
    import shutil

    shutil.copytree(base, target)
    model_file = target / "data" / classifier.MODEL_FILE
    model_file.write_bytes(edit(model_file.read_bytes()))
    sealing.seal(target)
    return target


def _load_in_child(path) -> subprocess.CompletedProcess:
    code = textwrap.dedent(f"""
        from fairops.mlflow import loader
        try:
            loader.load_native({str(path)!r})
            print("LOADED")
        except ValueError as error:
            print("REFUSED", error)
    """)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=WATCHDOG_SECONDS)


@pytest.mark.slow
def test_a_small_file_of_nested_shared_references_is_refused_by_the_budget(saved, tmp_path):
    """30 references to a list of 30 references, six levels: about 7e8 nodes for skops' audit, in a few KB."""
    path = _edited(saved[0]["logistic_regression"], tmp_path / "nested", attacks.nested_lists)
    assert (path / "data" / classifier.MODEL_FILE).stat().st_size < 30_000
    try:
        answer = _load_in_child(path)
    except subprocess.TimeoutExpired:
        pytest.fail(f"loading took over {WATCHDOG_SECONDS} s: no budget bounds the work of the file")
    assert answer.stdout.startswith("REFUSED"), answer.stdout + answer.stderr
    assert "schema.json: its " in answer.stdout and "unfold along their shared references into" in answer.stdout


@pytest.mark.parametrize("edit, words", [
    (lambda data: attacks.deep_list(data, 300), "nests more than 200 levels deep"),
    (attacks.cycle, "refers back to itself (a reference cycle)"),
    (lambda data: attacks.shared_array_file(data, 50), "is read by more than one state"),
])
def test_deep_cyclic_and_copy_making_files_are_refused_by_name(saved, tmp_path, edit, words):
    path = _edited(saved[0]["logistic_regression"], tmp_path / "edited", edit)
    with pytest.raises(ModelFilesError, match=f"model file 'model.skops' in .*: schema.json: .*{re.escape(words)}"):
        loader.load_native(path)


def test_a_forest_of_one_shared_tree_is_refused_and_the_unedited_files_answer_as_before(saved, tmp_path):
    paths, models, X = saved
    path = _edited(paths["random_forest"], tmp_path / "wide", lambda data: attacks.wide_forest(data, 2000))
    with pytest.raises(ModelFilesError, match="unfold along their shared references into"):
        loader.load_native(path)
    for name, model in models.items():
        np.testing.assert_array_equal(loader.load_native(paths[name]).predict_proba(X), model.predict_proba(X))


def test_a_reduction_of_reductions_is_refused_shared_or_written_out(saved, tmp_path):
    base = saved[0]["reduction"]
    shared = _edited(base, tmp_path / "by_reference", lambda data: attacks.nested_reduction(data, 300))
    with pytest.raises(ModelFilesError, match="unfold along their shared references"):
        loader.load_native(shared)
    written = _edited(base, tmp_path / "written", lambda data: attacks.nested_reduction(data, 1))
    with pytest.raises(ModelFilesError, match=r"predictor 0 \(ExponentiatedGradient\) is not a fitted classifier of a "
                                              r"base family .*never a reduction"):
        loader.load_native(written)


def test_a_reductions_predictors_are_capped_in_number_and_nodes(saved, monkeypatch):
    model = saved[1]["reduction"]
    nodes = sum(reduction_checks.predictor_nodes(p) for p in model.predictors_)
    assert nodes == sum(p.tree_.node_count for p in model.predictors_)  # decision trees: their node counts
    monkeypatch.setattr(reduction_checks, "MAX_PREDICTOR_NODES", nodes - 1)
    with pytest.raises(ValueError, match=f"hold {nodes:,} nodes, more than the {nodes - 1:,} a reduction may hold"):
        reduction_checks.check_reduction(model)
    monkeypatch.setattr(reduction_checks, "MAX_PREDICTORS", len(model.predictors_) - 1)
    with pytest.raises(ValueError, match=f"predictors_ must be a list of 1 to {len(model.predictors_) - 1}"):
        reduction_checks.check_reduction(model)


@pytest.mark.parametrize("cap, value, words", [
    ("MAX_NODES", 50, "holds more than 50 objects and lists"),
    ("MAX_REFERENCES", 3, "holds more than 3 references to shared parts"),
    ("MAX_DOCUMENT_BYTES", 1000, "bytes, above the 1,000 a model document may take"),
])
def test_each_cap_of_the_budget_refuses_by_name(saved, monkeypatch, cap, value, words):
    from fairops.mlflow import _parse_budget

    monkeypatch.setattr(_parse_budget, cap, value)
    with pytest.raises(ModelFilesError, match=words):
        loader.load_native(saved[0]["logistic_regression"])


def test_an_mlmodel_whose_aliases_unfold_far_past_its_size_is_refused(saved, tmp_path):
    """YAML aliases share a list the way skops ids do; MLmodel is walked under the same budget."""
    import shutil

    path = tmp_path / "aliases"
    shutil.copytree(saved[0]["logistic_regression"], path)
    mlmodel = yaml.safe_load((path / "MLmodel").read_text())
    layer = ["x"]
    for _ in range(8):
        layer = [layer] * 20
    mlmodel.setdefault("metadata", {})["planted"] = layer
    (path / "MLmodel").write_text(yaml.safe_dump(mlmodel))
    assert "&id" in (path / "MLmodel").read_text() and (path / "MLmodel").stat().st_size < 20_000
    sealing.seal(path)
    with pytest.raises(ModelFilesError, match="MLmodel in .*: its .* objects and lists unfold along their shared "
                                              "references into"):
        loader.load_native(path)


def test_a_legitimate_schema_unfolds_to_exactly_what_it_holds(saved):
    """skops writes every occurrence of a shared object in full: the file unfolds to its own size, refs and all."""
    from fairops.mlflow import _parse_budget

    for path in saved[0].values():
        schema, _ = attacks.read_schema((path / "data" / classifier.MODEL_FILE).read_bytes())
        walk = _parse_budget.check_skops_schema(schema, ValueError)
        assert walk.unfolded == walk.nodes and walk.references > 0 and walk.depth < _parse_budget.MAX_DEPTH, walk
