"""Two views of a tracked study in MLflow's UI, and the links that open them.

- **trials**: the runs table of the study, flat (not folded under the parent run), most accurate first,
  with the columns that compare fits at a glance (accuracy, fairness, weighted score, AUC_S, AUC_Y,
  budget, family, bracket, rung); its chart view plots accuracy against fairness for the runs the
  table has loaded (MLflow loads 100 at a time; "Load more" adds the rest).
- **compare**: the Pareto-front fits and the pick only, opened on the chart view: the same scatter
  and a table of their metrics, one column per run, the pick first.
- **study**: the parent run's metric charts, where ``pick_accuracy`` and ``pick_fairness`` over the
  budget spent draw the study's anytime curve.

:func:`publish_study_views` stores the two views on the experiment (see :mod:`._ui_shared_view` for
the MLflow versions this works with; elsewhere the links open the plain runs page, sorted the same
way, and MLflow's classic compare page), tags the pick's run, and writes the links on the parent run
(tags ``fairops.runs_url`` and ``fairops.compare_url`` and the run's description).

>>> links = StudyLinks(runs="R", compare="C", study="S", ui_command="mlflow ui --backend-store-uri sqlite:///m.db")
>>> print(links.text())
MLflow UI: mlflow ui --backend-store-uri sqlite:///m.db  (then open the links)
  trials:  R
  compare: C  (Pareto front + pick)
  study:   S  (the running pick over the budget spent)
"""

from __future__ import annotations

from dataclasses import dataclass

from . import _ui_shared_view as shared
from ._callback import BUDGET_SPENT, PICK_TAG, STUDY_TAG
from ._search import quoted
from ._ui_links import DEFAULT_UI_PORT, compare_runs_url, run_url, runs_url, ui_base_url, ui_command

WEIGHTED_SCORE = shared.column("metrics", "weighted_score")
TRIAL_COLUMNS = (
    shared.column("metrics", "accuracy"), shared.column("metrics", "fairness"), WEIGHTED_SCORE,
    shared.column("metrics", "auc_s"), shared.column("metrics", "auc_y"), shared.column("tags", "budget"),
    shared.column("tags", "family"), shared.column("tags", "bracket"), shared.column("tags", "rung"),
    shared.column("attributes", "Models"),
)
WIDTHS = {shared.RUN_NAME_COLUMN: 300, shared.column("tags", "family"): 160}
#: Runs MLflow's runs table loads at a time (its count of "matching runs" is of those loaded; not settable).
PAGE = 100
#: Runs shown in the comparison at most (the Pareto front of a long study can be large).
MAX_COMPARED = 60
#: The runs' metric the trials view sorts by: 0 for the pick, 1 for its refit, then the fits most accurate first.
ORDER = "view_order"
#: Run colours (MLflow's ``mlflow.runColor`` tag, which the UI's colour picker writes): the pick stands out
#: in red, the other Pareto-front fits grey, every other fit light grey.
RUN_COLOR_TAG = "mlflow.runColor"
PICK_COLOR, FRONT_COLOR, OTHER_COLOR = "#e5484d", "#8b95a7", "#d5d9e0"


@dataclass(frozen=True)
class StudyLinks:
    """Absolute links to the trials view and the comparison, and the command serving the UI (if any)."""

    runs: str
    compare: str
    study: str
    ui_command: str | None = None
    #: How many fit runs the trials view lists (MLflow's table loads 100 at a time and counts those loaded).
    n_runs: int | None = None

    def text(self) -> str:
        """The lines a job prints.

        >>> print(StudyLinks(runs="R", compare="C", study="S", n_runs=208).text().splitlines()[1])
          trials:  R  (208 fits; MLflow's table loads 100 at a time and counts those: "Load more" shows the rest)
        """
        head = (f"MLflow UI: {self.ui_command}  (then open the links)" if self.ui_command
                else "MLflow UI (the tracking server):")
        count = "" if self.n_runs is None or self.n_runs <= PAGE else (
            f"  ({self.n_runs} fits; MLflow's table loads {PAGE} at a time and counts those: "
            "\"Load more\" shows the rest)")
        return (f"{head}\n  trials:  {self.runs}{count}\n  compare: {self.compare}  (Pareto front + pick)\n"
                f"  study:   {self.study}  (the running pick over the budget spent)")


def _columns(alpha) -> list[str]:
    """The trial columns; without a fixed alpha most fits have no weighted score, so it is left out."""
    fixed = alpha is not None and alpha != "auto"
    return [c for c in TRIAL_COLUMNS if fixed or c != WEIGHTED_SCORE]


def _trials_state(study_name: str, section: str, alpha) -> dict:
    charts = [shared.scatter_chart(f"{section}-scatter", section, "accuracy", "fairness", "accuracy vs fairness")]
    return shared.view_state(columns=_columns(alpha), charts=charts, section=section, section_name="fairops",
                             search_filter=f"tags.`{STUDY_TAG}` = {quoted(study_name)}",
                             order_by=shared.column("metrics", ORDER), ascending=True, widths=WIDTHS)


def _compare_state(run_ids, section: str, alpha) -> dict:
    charts = [shared.scatter_chart(f"{section}-scatter", section, "accuracy", "fairness", "accuracy vs fairness"),
              shared.table_chart(f"{section}-table", section, "metrics of the compared fits")]
    search = "attributes.run_id IN (" + ", ".join(quoted(r) for r in run_ids) + ")"
    # the pick first, in the run list and as the metric table's first column, then the front most accurate first
    return shared.view_state(columns=_columns(alpha), charts=charts, section=section, section_name="fairops",
                             search_filter=search, order_by=shared.column("metrics", ORDER), ascending=True,
                             widths=WIDTHS)


def _study_state(parent_run_id: str, section: str) -> dict:
    charts = [shared.line_chart(f"{section}-{name}", section, f"pick_{name}", BUDGET_SPENT, f"pick_{name}")
              for name in ("accuracy", "fairness")]
    return shared.view_state(columns=[], charts=charts, section=section, section_name="anytime",
                             search_filter=f"attributes.run_id = {quoted(parent_run_id)}")


def order_and_color_runs(client, ordered_run_ids, pick_run_ids, front_run_ids) -> None:
    """Log :data:`ORDER` = 0, 1, 2, ... on the runs in turn (the trials view sorts by it) and their colour:
    the pick (and its refit) red, the other Pareto-front fits grey, the rest light grey, in every chart."""
    from mlflow.entities import Metric, RunTag

    front = set(front_run_ids)
    for position, run_id in enumerate(ordered_run_ids):
        color = PICK_COLOR if run_id in pick_run_ids else FRONT_COLOR if run_id in front else OTHER_COLOR
        client.log_batch(run_id, metrics=[Metric(ORDER, float(position), 0, 0)], tags=[RunTag(RUN_COLOR_TAG, color)])


def mark_pick(client, run_id: str) -> None:
    """Tag the pick's trial run and add `` (pick)`` to its name, so charts and tables show which it is."""
    run = client.get_run(run_id)
    name = run.info.run_name or run_id
    if not name.endswith(" (pick)"):
        client.update_run(run_id, name=f"{name} (pick)")
    client.set_tag(run_id, PICK_TAG, "true")


def publish_study_views(client, tracking_uri: str, experiment_id: str, parent_run_id: str, study_name: str, *,
                        compared_run_ids, pick_run_id: str | None = None, alpha=None,
                        description: str = "", ui_port: int = DEFAULT_UI_PORT, ordered_run_ids=(),
                        refit_run_id: str | None = None) -> StudyLinks:
    """Store the trials, comparison and study views, mark the pick, write the links on the parent run.

    ``compared_run_ids``: the runs of the comparison (the Pareto-front fits and the pick), at most
    :data:`MAX_COMPARED` are kept. ``alpha``: the study's (a float shows the weighted score column).
    ``description`` opens the parent run's note, above the links. ``ui_port``: where ``mlflow ui``
    serves a database store (a tracking server is its own UI). ``ordered_run_ids``: the trial runs,
    most accurate first; the trials view lists the pick and ``refit_run_id`` (its refit on all
    training rows) before them, so both are on its first screen.
    """
    compared = list(dict.fromkeys(compared_run_ids))[:MAX_COMPARED]
    picks = [run_id for run_id in (pick_run_id, refit_run_id) if run_id is not None]
    if pick_run_id is not None:
        mark_pick(client, pick_run_id)
        if pick_run_id not in compared:
            compared = [pick_run_id, *compared[:MAX_COMPARED - 1]]
    order_and_color_runs(client, list(dict.fromkeys([*picks, *ordered_run_ids, *compared])), picks, compared)
    keys = {name: f"fairops-{name}-{parent_run_id[:12]}" for name in ("trials", "compare", "study")}
    stored = all([shared.write_view(client, experiment_id, keys["trials"],
                                    _trials_state(study_name, f"{keys['trials']}-s", alpha)),
                  not compared or shared.write_view(client, experiment_id, keys["compare"],
                                                    _compare_state(compared, f"{keys['compare']}-s", alpha)),
                  shared.write_view(client, experiment_id, keys["study"],
                                    _study_state(parent_run_id, f"{keys['study']}-s"))])

    def links(prefix: str):
        if stored:
            return (runs_url(prefix, experiment_id, view=keys["trials"]),
                    runs_url(prefix, experiment_id, view=keys["compare"], mode="CHART"),
                    runs_url(prefix, experiment_id, view=keys["study"], mode="CHART"))
        # an MLflow whose UI this view format was not checked with: plain pages, sorted the same way
        trials = runs_url(prefix, experiment_id, orderByKey=shared.column("metrics", ORDER), orderByAsc=True)
        return (trials, compare_runs_url(prefix, experiment_id, compared) if compared else trials,
                run_url(prefix, experiment_id, parent_run_id, tab="model-metrics"))

    trials, compare, study = links(ui_base_url(tracking_uri, ui_port))
    relative_trials, relative_compare, relative_study = links("")
    note = (f"{description}\n\n" if description else "") + (
        f"- [Trials: accuracy, fairness, AUC_S and budget of every fit, the pick first]({relative_trials})\n"
        f"- [Compare the Pareto-front fits and the pick]({relative_compare})\n"
        f"- [The running pick over the budget spent]({relative_study})\n")
    for key, value in (("mlflow.note.content", note), ("fairops.runs_url", trials),
                       ("fairops.compare_url", compare), ("fairops.study_url", study)):
        client.set_tag(parent_run_id, key, value)
    return StudyLinks(trials, compare, study, ui_command(tracking_uri, ui_port),
                      n_runs=len(ordered_run_ids) or None)
