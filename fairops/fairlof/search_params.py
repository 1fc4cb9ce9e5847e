"""``search_params`` of ``FairLOF(algorithm="approximate")``: which graph, its settings, their checks.

>>> check_params({"graph": "nndescent", "recheck": 2})["recheck"]
2
"""

from __future__ import annotations

import numbers

#: The graphs ``search_params["graph"]`` chooses from, each with its settings and their defaults.
GRAPH_PARAMS = {
    "hnsw": {"hnsw_m": 32, "ef_construction": 40, "ef_search": 32, "recheck": 4},
    "nndescent": {"graph_neighbors": 10, "n_trees": 12, "max_rounds": 6, "recheck": 10},
}
#: Tuning settings of the HNSW search (the default graph) and their defaults.
DEFAULT_PARAMS = GRAPH_PARAMS["hnsw"]


def check_params(params) -> dict:
    """``params`` (None or a dict: ``graph`` and that graph's ``GRAPH_PARAMS`` names) merged over the
    defaults, checked."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise TypeError(f"search_params must be a dict or None, got {type(params).__name__}")
    graph = params.get("graph", "hnsw")
    if graph not in GRAPH_PARAMS:
        raise ValueError(f"search_params['graph'] must be one of {list(GRAPH_PARAMS)}, got {graph!r}")
    defaults = GRAPH_PARAMS[graph]
    unknown = sorted(set(params) - set(defaults) - {"graph"}, key=str)
    if unknown:
        raise ValueError(f"search_params has unknown key(s) {unknown} for graph {graph!r}; it takes "
                         f"{sorted(defaults)} (and 'graph')")
    merged = {**defaults, **{name: value for name, value in params.items() if name != "graph"}}
    for name, value in merged.items():
        lowest = 0 if name == "recheck" else 1
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < lowest:
            raise ValueError(f"search_params[{name!r}] must be an integer >= {lowest}, got {value!r}")
    if graph == "nndescent" and merged["n_trees"] < 2:
        raise ValueError(f"search_params['n_trees'] must be at least 2 (one tree's leaves are never joined), "
                         f"got {merged['n_trees']!r}")
    if graph == "hnsw" and merged["hnsw_m"] < 2:
        raise ValueError(f"search_params['hnsw_m'] must be at least 2, got {merged['hnsw_m']!r}")
    return {"graph": graph, **{name: int(value) for name, value in merged.items()}}
