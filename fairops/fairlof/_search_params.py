"""``search_params`` of ``FairLOF(algorithm="approximate")``: which graph, its settings, their checks.

>>> check_params({"graph": "nndescent", "recheck": 2})["recheck"]
2
"""

from __future__ import annotations

from .._param_checks import Interval, Options, check_params as check_table
from ..errors import InputError

#: The graphs ``search_params["graph"]`` chooses from, each with its settings and their defaults.
GRAPH_PARAMS = {
    "hnsw": {"hnsw_m": 32, "ef_construction": 40, "ef_search": 32, "recheck": 4},
    "nndescent": {"graph_neighbors": 10, "n_trees": 12, "max_rounds": 6, "recheck": 10},
}
#: Tuning settings of the HNSW search (the default graph) and their defaults.
DEFAULT_PARAMS = GRAPH_PARAMS["hnsw"]
_COUNT = [Interval("int", 1, None)]
#: What each setting may be, per graph: counts >= 1, recheck >= 0 (off), an HNSW graph's links per row >= 2
#: and at least 2 projection trees for NN-descent (one tree's leaves are never joined).
GRAPH_CONSTRAINTS = {
    "hnsw": {"hnsw_m": [Interval("int", 2, None)], "ef_construction": _COUNT, "ef_search": _COUNT,
             "recheck": [Interval("int", 0, None)]},
    "nndescent": {"graph_neighbors": _COUNT, "n_trees": [Interval("int", 2, None)], "max_rounds": _COUNT,
                  "recheck": [Interval("int", 0, None)]},
}


def check_params(params) -> dict:
    """``params`` (None or a dict: ``graph`` and that graph's ``GRAPH_PARAMS`` names) merged over the
    defaults, checked."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise TypeError(f"search_params must be a dict or None, got {type(params).__name__}")
    graph = params.get("graph", "hnsw")
    check_table({"search_params['graph']": graph}, {"search_params['graph']": [Options(*GRAPH_PARAMS)]})
    defaults = GRAPH_PARAMS[graph]
    unknown = sorted(set(params) - set(defaults) - {"graph"}, key=str)
    if unknown:
        raise InputError(f"search_params has unknown key(s) {unknown} for graph {graph!r}; it takes "
                         f"{sorted(defaults)} (and 'graph')")
    merged = {**defaults, **{name: value for name, value in params.items() if name != "graph"}}
    check_table({f"search_params[{name!r}]": value for name, value in merged.items()},
                {f"search_params[{name!r}]": allowed for name, allowed in GRAPH_CONSTRAINTS[graph].items()})
    return {"graph": graph, **{name: int(value) for name, value in merged.items()}}
