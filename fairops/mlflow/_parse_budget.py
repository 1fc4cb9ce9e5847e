"""Bounded work on every model file before anything else reads it: nodes, references and depth.

A few kilobytes of shared references can make a reader walk billions of nodes, so every document of a model
directory (``MLmodel``, the manifests, a flavor's JSON, a skops ``schema.json``) is parsed here and walked
once, without recursion, under a budget fixed in code: :data:`MAX_NODES` objects and lists,
:data:`MAX_DEPTH` levels, :data:`MAX_REFERENCES` references, no cycle, and at most :data:`EXPANSION` times
its own size once unfolded along its references. A file over the budget is refused by name before skops'
audit or any loader sees it (``docs/mlflow/loading.md``).

>>> check_document({"a": [1, 2, {"b": None}]}, ValueError)
Walk(nodes=3, references=0, depth=3, unfolded=3)
>>> deep = []
>>> for _ in range(MAX_DEPTH + 1):
...     deep = [deep]
>>> check_document(deep, ValueError)
Traceback (most recent call last):
...
ValueError: it nests more than 200 levels deep, the budget of a model file
>>> layer = [0]
>>> for _ in range(6):  # YAML aliases: one list referred to 30 times, six levels over
...     layer = [layer] * 30
>>> check_document(layer, ValueError)
Traceback (most recent call last):
...
ValueError: its 7 objects and lists unfold along their shared references into 754,137,931 (more than 2 times as many): refused, as a reader would walk them all
"""  # noqa: E501 - a doctest's expected output is one line

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

#: Bytes of one JSON or YAML document of a model (a reduction over LightGBM's skops schema: tens of MB).
MAX_DOCUMENT_BYTES = 512 << 20
#: Objects and lists a model file may hold (a 500-tree forest's skops schema holds about 0.5 million).
MAX_NODES = 4_000_000
#: How deep a model file may nest along any path (a tuned pipeline's skops schema: 27).
MAX_DEPTH = 200
#: References to an earlier skops state a schema may hold (a 500-tree forest's: about 0.2 million).
MAX_REFERENCES = 1_000_000
#: How many times its own objects and lists a file may unfold into along its references.
EXPANSION = 2

_LOADERS_READING_FILES = ("NdArrayNode", "BytesNode", "BytearrayNode", "SparseMatrixNode")


class Walk(NamedTuple):
    """What a walk under the budget found: objects and lists, references, the deepest path, the unfolded size."""

    nodes: int
    references: int
    depth: int
    unfolded: int


class _Graph:
    """The containers of a document as keys, each key with the child keys of each of its occurrences."""

    def __init__(self, refuse) -> None:
        self.refuse = refuse
        self.occurrences: dict = {}  # key -> [tuple of child keys, one per occurrence]
        self.nodes = 0
        self.references = 0

    def add(self, key, children: list) -> None:
        """One occurrence of ``key`` (a second one is a reference to the first)."""
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise self.refuse(f"it holds more than {MAX_NODES:,} objects and lists, the budget of a model file")
        known = self.occurrences.get(key)
        if known is None:
            self.occurrences[key] = [tuple(children)]
            return
        self.reference()
        known.append(tuple(children))

    def reference(self) -> None:
        self.references += 1
        if self.references > MAX_REFERENCES:
            raise self.refuse(f"it holds more than {MAX_REFERENCES:,} references to shared parts, the budget of a "
                              "model file")

    def unfolded(self, root) -> Walk:
        """Refuse a cycle, a path deeper than :data:`MAX_DEPTH` and an unfolded size over the budget.

        The size of a key is the largest of its occurrences' (one plus its children's); which occurrence a
        reader builds first does not matter then. Sizes saturate just above the budget.
        """
        cap = EXPANSION * self.nodes
        size: dict = {}
        depth: dict = {}
        on_path: set = set()
        stack = [(root, False)]
        while stack:
            key, children_done = stack.pop()
            if key in size:
                continue
            if children_done:
                on_path.discard(key)
                best_size, best_depth = 0, 0
                for children in self.occurrences[key]:
                    total = 1 + sum(size[child] for child in children)
                    best_size = max(best_size, min(total, cap + 1))
                    best_depth = max(best_depth, 1 + max((depth[child] for child in children), default=0))
                size[key], depth[key] = best_size, best_depth
                if best_depth > MAX_DEPTH:
                    raise self.refuse(f"it nests more than {MAX_DEPTH} levels deep, the budget of a model file")
                continue
            if key in on_path:
                raise self.refuse("a shared part refers back to itself (a reference cycle)")
            on_path.add(key)
            stack.append((key, True))
            for children in self.occurrences[key]:
                stack.extend((child, False) for child in children if child not in size)
        if size[root] > cap:
            raise self.refuse(f"its {self.nodes:,} objects and lists unfold along their shared references into "
                              f"{_exact_size(self.occurrences, root):,} (more than {EXPANSION} times as many): "
                              "refused, as a reader would walk them all")
        return Walk(self.nodes, self.references, depth[root], size[root])


def _exact_size(occurrences: dict, root) -> int:
    """The unfolded size without saturation, for the message (the graph is known to be acyclic here)."""
    size: dict = {}
    stack = [(root, False)]
    while stack:
        key, children_done = stack.pop()
        if key in size:
            continue
        if children_done:
            size[key] = max(1 + sum(size[child] for child in children) for children in occurrences[key])
            continue
        stack.append((key, True))
        for children in occurrences[key]:
            stack.extend((child, False) for child in children if child not in size)
    return size[root]


def _contents(value):
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, list):
        return list(value)
    return None


def check_document(document, refuse) -> Walk:
    """Walk a parsed JSON or YAML document under the budget; ``refuse(problem)`` makes the error raised.

    A YAML alias is a shared reference: the object it names is counted once, and unfolded at every alias.

    Parameters
    ----------
    document : object
        What ``json.loads`` or ``yaml.safe_load`` returned.
    refuse : callable
        ``refuse(problem) -> Exception``, naming the file.

    Returns
    -------
    Walk
        What the walk found.
    """
    if _contents(document) is None:
        return Walk(0, 0, 0, 0)
    graph, seen, stack = _Graph(refuse), {id(document)}, [document]
    while stack:
        value = stack.pop()
        children = [child for child in _contents(value) if _contents(child) is not None]
        graph.add(id(value), [id(child) for child in children])
        for child in children:
            if id(child) in seen:
                graph.reference()
            else:
                seen.add(id(child))
                stack.append(child)
    return graph.unfolded(id(document))


def _state_id(value, refuse):
    """A skops state's ``__id__`` (None when it has none): a positive whole number."""
    if "__id__" not in value:
        return None
    saved = value["__id__"]
    if type(saved) is not int or saved <= 0:
        raise refuse(f"a state's __id__ is {str(saved)[:40]!r}, not a positive whole number")
    return saved


def check_skops_schema(schema: dict, refuse) -> Walk:
    """Walk a skops ``schema.json`` under the budget before skops builds anything of it.

    Every occurrence of one ``__id__`` is the same node to skops (:mod:`skops.io`'s loader keeps the first
    one built and hands it back for the others); each state reading an array file of the archive carries
    the only id that names that file.

    Parameters
    ----------
    schema : dict
        The parsed ``schema.json``.
    refuse : callable
        ``refuse(problem) -> Exception``, naming the file.

    Returns
    -------
    Walk
        What the walk found.
    """
    graph, files = _Graph(refuse), dict[str, int | None]()
    position = 0
    root = ("state", 0) if _state_id(schema, refuse) is None else ("id", _state_id(schema, refuse))
    stack = [(schema, root)]
    while stack:
        value, key = stack.pop()
        children = []
        is_dict = isinstance(value, dict)
        for child in value.values() if is_dict else value:
            if isinstance(child, dict):
                saved = child.get("__id__")
                if saved is not None and (type(saved) is not int or saved <= 0):
                    _state_id(child, refuse)  # refuses it by name
            elif isinstance(child, list):
                saved = None
            else:
                continue
            position += 1
            child_key = ("id", saved) if saved is not None else ("state", position)
            children.append(child_key)
            stack.append((child, child_key))
        if is_dict and "file" in value and value.get("__loader__") in _LOADERS_READING_FILES:
            saved = _state_id(value, refuse)
            named = files.setdefault(str(value["file"]), saved)
            if saved is None or named != saved:
                raise refuse(f"array file {str(value['file'])[:60]!r} is read by more than one state (each read "
                             "is a copy of it)")
        graph.add(key, children)
    return graph.unfolded(root)


def _sized(data: bytes, refuse) -> str:
    if len(data) > MAX_DOCUMENT_BYTES:
        raise refuse(f"it is {len(data):,} bytes, above the {MAX_DOCUMENT_BYTES:,} a model document may take")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise refuse(f"it is not UTF-8 text: {error}") from None


def parse_json(data: bytes, refuse: Callable[[str], Exception]) -> Any:
    """The JSON document in ``data``, parsed and walked under the budget (:func:`check_document`).

    Parameters
    ----------
    data : bytes
        The file's bytes.
    refuse : callable
        ``refuse(problem) -> Exception``, naming the file.

    Returns
    -------
    object
        The parsed document.
    """
    import json

    try:
        document = json.loads(_sized(data, refuse))
    except (ValueError, RecursionError) as error:  # ValueError: also an integer of over 4,300 digits
        raise refuse(f"it is not valid JSON: {str(error)[:200]}") from None
    check_document(document, refuse)
    return document


def parse_yaml(data: bytes, refuse: Callable[[str], Exception]) -> Any:
    """The YAML document in ``data`` (``yaml.safe_load``), walked under the budget, aliases unfolded.

    Parameters
    ----------
    data : bytes
        The file's bytes.
    refuse : callable
        ``refuse(problem) -> Exception``, naming the file.

    Returns
    -------
    object
        The parsed document.
    """
    import yaml

    try:
        document = yaml.safe_load(_sized(data, refuse))
    except (yaml.YAMLError, RecursionError) as error:
        raise refuse(f"it is not readable YAML: {str(error)[:200]}") from None
    check_document(document, refuse)
    return document
