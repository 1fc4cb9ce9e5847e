"""optuna-dashboard over the study of a ``fairops tune --min-fairness 0.8``, in a real headless Chromium.

The study names its two objectives after the task and every finished fit carries Optuna's constraints,
so the dashboard's Pareto front shows both metric names on its axes and the fits below the floor as
infeasible. With ``FAIROPS_SCREENSHOTS=<folder>`` the screenshot is kept there (the README's comes from
``FAIROPS_SCREENSHOTS=docs``) and the tune is the paper's 206 fits; otherwise it goes to the test's temporary
folder and the tune is a 22-fit Hyperband (eta 3, s_max 2): the dashboard is under test, not the search.
"""

import contextlib
import io
import os
import re
import threading
from wsgiref.simple_server import WSGIRequestHandler, make_server

import optuna
import pytest
from optuna.trial import TrialState
from optuna_dashboard import wsgi

from fairops.cli import main
from fairops.datasets import load_german
from tests.browser import Browser, chromium_path

pytestmark = pytest.mark.slow

FLOOR = 0.8
FOR_THE_README = bool(os.environ.get("FAIROPS_SCREENSHOTS"))
SCHEDULE = [] if FOR_THE_README else ["--s-max", "2"]
STUDY = f"german-fb-auto-minfair0.8{'' if FOR_THE_README else '-eta3-smax2'}-fast-seed0"
# The Pareto-front plot's traces, told apart by the label optuna-dashboard puts in their hover box.
PARETO_TRACES = """(() => {
  const plot = document.querySelector('.js-plotly-plot');
  return (plot && plot.data || []).map(t => ({kind: (t.hovertemplate || '').replace(/^.*<extra>|<\\/extra>$/g, ''),
                                               y: Array.from(t.y || [])}));
})()"""


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    project = tmp_path_factory.mktemp("project")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["tune", "--dataset", "german", "--max-train-rows", "300", "--families", "logistic_regression",
                     "--no-progress", "--min-fairness", str(FLOOR), *SCHEDULE, "--project-dir", str(project)]) == 0
    storage = f"sqlite:///{project / 'optuna.db'}"
    return storage, optuna.load_study(study_name=STUDY, storage=storage), out.getvalue()


class _Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def dashboard(tuned):
    if chromium_path() is None:  # a missing browser fails, here and in CI: a skip would hide an untested UI
        pytest.fail("no chromium on PATH: the UI tests need one (as root: bash .ci/chromium.sh installs Debian's)")
    server = make_server("127.0.0.1", 0, wsgi(tuned[0]), handler_class=_Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join()


def test_every_finished_fit_carries_the_constraint_and_best_trials_are_feasible(tuned):
    _, study, printed = tuned
    trials = study.get_trials(deepcopy=False)
    fits = [t for t in trials if t.state == TrialState.COMPLETE]
    assert len(fits) > len(trials) / 2 and any(t.values[1] < FLOOR for t in fits)  # the floor bites
    for t in fits:
        assert t.system_attrs["constraints"] == [pytest.approx(FLOOR - t.values[1])]
    assert all("constraints" not in t.system_attrs for t in trials if t.state == TrialState.FAIL)
    assert study.best_trials and all(t.values[1] >= FLOOR for t in study.best_trials)
    pick = int(re.search(r"Fairband pick \(#(\d+)", printed)[1])  # the pick tune refit and registered
    assert study.trials[pick].values[1] >= FLOOR
    task = load_german().task
    assert study.metric_names == [task.accuracy_name, task.fairness_name]


def test_the_dashboard_pareto_front_names_both_metrics_and_marks_the_infeasible_fits(tuned, dashboard, screenshots):
    storage, study, _ = tuned
    study_id = optuna.storages.RDBStorage(storage).get_study_id_from_name(study.study_name)
    with Browser(1400, 640) as browser:
        browser.open(f"{dashboard}/dashboard/studies/{study_id}")
        browser.wait_for_text("Pareto Front", "Objective X", "Infeasible")
        browser.wait_for(f"{PARETO_TRACES}.some(t => t.kind === 'Best Trial')", what="the Pareto front drawn")
        browser.screenshot(screenshots / "optuna_dashboard_pareto.png")
        text = browser.text()
        traces = browser.evaluate(PARETO_TRACES)
    assert (screenshots / "optuna_dashboard_pareto.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pareto = text.split("Pareto Front", 1)[1].split("History", 1)[0]
    assert re.search(rf"Objective X:\s*{re.escape(study.metric_names[0])}", pareto)
    assert re.search(rf"Objective Y:\s*{re.escape(study.metric_names[1])}", pareto)
    by_kind = {trace["kind"]: trace["y"] for trace in traces}
    fits = [t for t in study.trials if t.state == TrialState.COMPLETE]
    infeasible = sorted(t.values[1] for t in fits if t.values[1] < FLOOR)
    assert sorted(by_kind["Infeasible Trial"]) == pytest.approx(infeasible)
    # the front's fits (the dashboard draws a fit whose values repeat another front fit's once or more)
    assert {round(y, 12) for y in by_kind["Best Trial"]} == {round(t.values[1], 12) for t in study.best_trials}
    assert min(by_kind["Feasible Trial"] + by_kind["Best Trial"]) >= FLOOR
