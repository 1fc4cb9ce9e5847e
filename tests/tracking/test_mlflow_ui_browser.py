"""MLflow's UI over a finished ``fairops tune``, in a real headless Chromium.

The links ``fairops tune`` prints must open the runs table (not the GenAI overview) with the trials,
their accuracy and fairness in view, and the comparison of the Pareto-front fits and the pick. With
``FAIROPS_SCREENSHOTS=<folder>`` the screenshots are kept there (the README's come from
``FAIROPS_SCREENSHOTS=docs``) and the tune is the paper's 206 fits; otherwise they go to the test's temporary
folder and the tune is a 22-fit Hyperband (eta 3, s_max 2): the UI is under test, not the search.
"""

import contextlib
import io
import os
import re
import time

import pytest
from mlflow.tracking import MlflowClient

from fairops.cli import main
from fairops.fairband import pareto_front
from tests.browser import Browser, chromium_path
from tests.services import mlflow_tracking_server

pytestmark = pytest.mark.slow

FOR_THE_README = bool(os.environ.get("FAIROPS_SCREENSHOTS"))
SCHEDULE = [] if FOR_THE_README else ["--s-max", "2"]
STUDY = f"adult-fb-auto{'' if FOR_THE_README else '-eta3-smax2'}-fast-seed0"
CLOSE_ASSISTANT = '[data-component-id="mlflow.assistant.chat_panel.close"]'
# Cell texts of the rows the runs table has drawn, by row index and column id.
TABLE_ROWS = """(() => {
  const rows = {};
  for (const row of document.querySelectorAll('.ag-row[row-index]')) {
    const key = row.getAttribute('row-index');
    rows[key] = rows[key] || {__index: key};
    for (const cell of row.querySelectorAll('.ag-cell[col-id]'))
      rows[key][cell.getAttribute('col-id')] = cell.innerText.trim();
  }
  return Object.values(rows);
})()"""
RUN_NAME = "attributes.`Run Name`"
PICK_RGB, FRONT_RGB = "rgb(229, 72, 77)", "rgb(139, 149, 167)"  # study_views.PICK_COLOR, FRONT_COLOR
FAIRNESS = "metrics.`fairness`"


@pytest.fixture(scope="module")
def chromium():
    # A missing browser fails, here and in CI: a skip would hide an untested UI.
    if chromium_path() is None:
        pytest.fail("no chromium on PATH: the UI tests need one (as root: bash .ci/chromium.sh installs Debian's)")


@pytest.fixture(scope="module")
def tuned(tmp_path_factory, chromium):
    """A finished small tune, the links it printed, and an MLflow server (with its UI) over its store."""
    project = tmp_path_factory.mktemp("project")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["tune", "--dataset", "adult", "--max-train-rows", "2000", "--no-progress",
                     "--families", "logistic_regression,decision_tree,lightgbm", *SCHEDULE,
                     "--project-dir", str(project)]) == 0
    printed = out.getvalue()
    links = dict(re.findall(r"^\s+(trials|compare|study):\s+(\S+)", printed, re.M))
    uri = f"sqlite:///{project / 'mlflow.db'}"
    with mlflow_tracking_server(tmp_path_factory.mktemp("server"), backend_store_uri=uri) as server:
        yield {"project": project, "uri": uri, "server": server,
               "links": {k: v.replace("http://127.0.0.1:5000", server) for k, v in links.items()}}


def _trial_runs(uri):
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name(STUDY)
    runs = client.search_runs([experiment.experiment_id], "tags.`fairops.role` = 'trial'", max_results=1000)
    return {run.info.run_name: run for run in runs}


def _row_index(row) -> int:
    return int(row["__index"])


def _settle(browser: Browser) -> None:
    browser.click(CLOSE_ASSISTANT)  # MLflow opens its assistant panel on a first visit
    time.sleep(2)


def test_the_printed_link_opens_the_runs_table_with_the_trials_and_their_fairness(tuned, screenshots):
    runs = _trial_runs(tuned["uri"])
    with Browser(1600, 1000) as browser:
        browser.open(tuned["links"]["trials"])
        browser.wait_for_text("Run Name")
        browser.wait_for("document.querySelectorAll('.ag-row[row-index]').length >= 20", what="20 table rows")
        _settle(browser)
        browser.screenshot(screenshots / "mlflow_runs.png")
        assert (screenshots / "mlflow_runs.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert browser.evaluate("document.title").startswith("Runs")
        assert "/runs?" in browser.evaluate("location.hash")
        text = browser.text()
        assert "Token Usage" not in text and "Traces" not in text.split("Run Name")[1]  # not the GenAI overview
        rows = browser.evaluate(TABLE_ROWS)
    shown = {}
    for row in rows:
        name = row.get(RUN_NAME, "").split("\n")[-1]
        if name in runs:
            shown[name] = row
    # trials listed flat, not folded under the parent run (the pick, further down the accuracy order on a
    # task where fairness costs accuracy, is checked on the compare view)
    assert len(shown) >= 20
    for name, row in shown.items():  # every drawn trial shows its own accuracy and fairness
        metrics = runs[name].data.metrics
        if "fairness" not in metrics:  # a failed fit (constant scores) has none, and the table says so
            assert row[FAIRNESS] == row["metrics.`accuracy`"] == "-"
            continue
        assert float(row[FAIRNESS]) == pytest.approx(metrics["fairness"], rel=1e-9)
        assert float(row["metrics.`accuracy`"]) == pytest.approx(metrics["accuracy"], rel=1e-9)
    (version,) = MlflowClient(tuned["uri"]).search_model_versions()  # the refit pick, registered once
    # the registered version comes from the study's selection run, the row the README points at
    selection = MlflowClient(tuned["uri"]).get_run(version.run_id)
    assert selection.info.run_name.endswith("/selection")
    # first the pick and its refit (the selection run), then the fits most accurate first
    names = [row.get(RUN_NAME, "").split("\n")[-1] for row in sorted(rows, key=_row_index)]
    assert names[0].endswith(" (pick)") and names[1] == selection.info.run_name
    accuracies = [float(row["metrics.`accuracy`"]) for row in sorted(rows, key=_row_index)[2:]
                  if row.get(RUN_NAME, "").split("\n")[-1] in runs and row["metrics.`accuracy`"] != "-"]
    assert accuracies == sorted(accuracies, reverse=True)


def test_the_compare_link_shows_the_pareto_front_and_the_pick(tuned, screenshots):
    import optuna

    runs = _trial_runs(tuned["uri"])
    study = optuna.load_study(study_name=STUDY, storage=f"sqlite:///{tuned['project'] / 'optuna.db'}")
    numbers = {t.number for t in pareto_front(study)}
    expected = {name for name, run in runs.items()
                if int(run.data.tags["fairops.trial_number"]) in numbers or name.endswith(" (pick)")}
    with Browser(1600, 1000) as browser:
        browser.open(tuned["links"]["compare"])
        browser.wait_for_text(*expected)
        browser.wait_for("document.querySelectorAll('.js-plotly-plot .scatterlayer .point').length > 0",
                         what="the accuracy-vs-fairness scatter")
        _settle(browser)
        browser.screenshot(screenshots / "mlflow_compare.png")
        assert (screenshots / "mlflow_compare.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        listed = browser.evaluate("Array.from(document.querySelectorAll('.ag-row[row-id]'))"
                                  ".map(e => e.getAttribute('row-id'))")
        first = browser.evaluate("document.querySelector('.ag-row[row-index=\"0\"]').getAttribute('row-id')")
        points = browser.evaluate("document.querySelectorAll('.js-plotly-plot .scatterlayer .point').length")
        colors = browser.evaluate("Array.from(document.querySelectorAll('.js-plotly-plot .scatterlayer .point'))"
                                  ".map(p => getComputedStyle(p).fill)")
        text = browser.text()
    assert set(listed) == {runs[name].info.run_id for name in expected}  # exactly the Pareto front and the pick
    (pick,) = [name for name in expected if name.endswith(" (pick)")]
    assert first == runs[pick].info.run_id  # the pick first, not last behind the more accurate fits
    assert points == len(expected)  # one point per compared fit
    assert colors.count(PICK_RGB) == 1 and set(colors) == {PICK_RGB, FRONT_RGB}  # the pick apart, in red
    assert "accuracy vs. fairness" in text and "metrics of the compared fits" in text
    for name in expected:  # the metric table holds every compared run's fairness, rounded as shown
        assert f"{runs[name].data.metrics['fairness']:.2f}" in text


def test_the_study_link_draws_the_running_pick_over_the_budget_spent(tuned, screenshots):
    client = MlflowClient(tuned["uri"])
    experiment = client.get_experiment_by_name(STUDY)
    (parent,) = client.search_runs([experiment.experiment_id], "tags.`fairops.role` = 'study'")
    with Browser(1600, 1000) as browser:
        browser.open(tuned["links"]["study"])
        browser.wait_for_text("pick_accuracy", "pick_fairness", "budget_spent")
        browser.wait_for("document.querySelectorAll('.js-plotly-plot .scatterlayer .trace').length >= 2",
                         what="the two pick curves")
        _settle(browser)
        browser.screenshot(screenshots / "mlflow_anytime.png")
        titles = browser.evaluate("Array.from(document.querySelectorAll('.js-plotly-plot .xtitle'))"
                                  ".map(t => t.textContent)")
        text = browser.text()
    assert titles and set(titles) == {"budget_spent"}  # the x axis is the budget, not "Step"
    assert parent.info.run_name in text and "Model training" in text  # the study's own run, as model training


def test_the_parent_run_links_to_both_views(tuned):
    client = MlflowClient(tuned["uri"])
    experiment = client.get_experiment_by_name(STUDY)
    (parent,) = client.search_runs([experiment.experiment_id], "tags.`fairops.role` = 'study'")
    note = parent.data.tags["mlflow.note.content"]
    assert "**accuracy** = precision at tpr=0.5" in note and "**fairness** = tpr ratio" in note
    with Browser(1600, 1000) as browser:
        browser.open(f"{tuned['server']}/#/experiments/{experiment.experiment_id}/runs/{parent.info.run_id}")
        browser.wait_for_text("Compare the Pareto-front fits and the pick", "The running pick over the budget spent")
        hrefs = browser.evaluate("Object.fromEntries(Array.from(document.querySelectorAll('a'))"
                                 ".map(a => [a.innerText.split(':')[0], a.href]))")
        assert hrefs["Trials"] == tuned["links"]["trials"]  # the note's links open in a new tab: same addresses
        assert hrefs["Compare the Pareto-front fits and the pick"] == tuned["links"]["compare"]
        assert hrefs["The running pick over the budget spent"] == tuned["links"]["study"]
        browser.open(hrefs["Trials"])
        browser.wait_for("document.querySelectorAll('.ag-row[row-index]').length >= 20", what="the trials table")
