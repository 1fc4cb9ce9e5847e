"""Saved views of MLflow's runs page, stored the way the UI's own "Share" button stores them.

The runs page of MLflow's UI reads ``viewStateShareKey=<key>`` from its address and applies the view
kept in the experiment tag ``mlflow.sharedViewState.<key>``: search filter, sort order, selected columns,
which runs the charts show, and the chart cards. The tag is written through the public
``MlflowClient.set_experiment_tag``, but its JSON layout belongs to the UI and is not documented (the
UI's address parameters carry the filter and the sort, never the columns or the charts; MLflow's REST
API has no views), so it is written only for the MLflow versions in :data:`WRITTEN_FOR`; :func:`write_view`
returns False elsewhere and callers link to the plain runs page instead. The UI takes from the stored
view only the keys it knows, each over its default (two lists of keys, the same in the bundles of MLflow
3.17.2 and 3.18.0), so a key a later 3.x release drops or renames falls back to the UI's default rather
than breaking the page. The test suite checks the installed UI's lists hold every key written here, and
opens the views in a real browser.

>>> view_supported("3.17.2"), view_supported("3.16.0"), view_supported("4.0.0")
(True, False, False)
"""

from __future__ import annotations

import json
import re

from .._versions import in_range
from ..errors import InputError

#: MLflow versions (lowest included, highest excluded) whose UI reads the views written here.
WRITTEN_FOR = ((3, 17), (4, 0))
TAG_PREFIX = "mlflow.sharedViewState."
_KEY = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")
# The UI's defaults for the search facets a view must carry.
_FACETS = {"searchFilter": "", "orderByKey": "attributes.start_time", "orderByAsc": False, "startTime": "ALL",
           "lifecycleFilter": "Active", "modelVersionFilter": "All Runs", "datasetsFilter": []}


def view_supported(version: str) -> bool:
    return in_range(version, WRITTEN_FOR)


def column(kind: str, key: str) -> str:
    """A runs-table column key: ``column("metrics", "fairness")`` -> ``metrics.`fairness```."""
    if kind not in ("attributes", "metrics", "params", "tags"):
        raise InputError(f"kind must be attributes, metrics, params or tags, got {kind!r}")
    return f"{kind}.`{key}`"


def scatter_chart(uuid: str, section: str, x: str, y: str, title: str) -> dict:
    return {"uuid": uuid, "type": "SCATTER", "xaxis": {"key": x, "type": "METRIC"},
            "yaxis": {"key": y, "type": "METRIC"}, "runsCountToCompare": 1000, "metricSectionId": section,
            "deleted": False, "isGenerated": False, "displayName": title}


def line_chart(uuid: str, section: str, metric: str, x_metric: str, title: str) -> dict:
    """A metric's history drawn against another metric logged at the same steps (the x axis is named for it)."""
    return {"uuid": uuid, "type": "LINE", "metricKey": metric, "selectedMetricKeys": [metric], "lineSmoothness": 0,
            "xAxisKey": "metric", "selectedXAxisMetricKey": x_metric, "xAxisScaleType": "linear",
            "scaleType": "linear", "range": {}, "displayPoints": True, "useGlobalXaxisKey": False,
            "useGlobalLineSmoothing": False, "runsCountToCompare": 10, "metricSectionId": section,
            "deleted": False, "isGenerated": False, "displayName": title}


def table_chart(uuid: str, section: str, title: str) -> dict:
    """The chart view's "difference" card: a table of the runs' metrics and tags, one column per run."""
    return {"uuid": uuid, "type": "DIFFERENCE", "compareGroups": ["Model metrics", "Tags"], "chartName": title,
            "showChangeFromBaseline": False, "showDifferencesOnly": False, "baselineColumnUuid": "",
            "runsCountToCompare": 100, "metricSectionId": section, "deleted": False, "isGenerated": False,
            "displayName": title}


RUN_NAME_COLUMN = "attributes.`Run Name`"


def view_state(*, columns, charts, section: str, section_name: str, search_filter: str = "",
               order_by: str | None = None, ascending: bool = False, widths: dict | None = None) -> dict:
    """A runs-page view: every run shown in the charts, one chart section first, the given columns in
    this order after the run name, with the given widths in pixels."""
    state = dict(_FACETS)
    state.update({"searchFilter": search_filter, "orderByAsc": bool(ascending)})
    if order_by is not None:
        state["orderByKey"] = order_by
    state.update({
        "selectedColumns": list(columns), "columnOrder": [RUN_NAME_COLUMN, *columns],
        "columnWidths": dict(widths or {}), "runsHiddenMode": "SHOW_ALL", "compareRunCharts": list(charts),
        "compareRunSections": [{"uuid": section, "name": section_name, "display": True, "isReordered": False,
                                "deleted": False, "isGenerated": False, "columns": 2, "cardHeight": 420}],
        "isAccordionReordered": False, "hideEmptyCharts": True, "useGroupedValuesInCharts": True,
    })
    return state


def write_view(client, experiment_id: str, key: str, state: dict) -> bool:
    """Store ``state`` under ``key`` on the experiment; False (nothing written) outside :data:`WRITTEN_FOR`."""
    import mlflow

    if not _KEY.match(key):
        raise InputError(f"key must be 1-100 letters, digits, '_', '.' or '-', got {key!r}")
    if not view_supported(mlflow.__version__):
        return False
    client.set_experiment_tag(experiment_id, TAG_PREFIX + key, json.dumps(state, separators=(",", ":")))
    return True
