"""Saved classifiers whose skops schema is edited into a reference graph, as a writer of the artifact store could.

skops' loader hands back the node it built first for an ``__id__`` at every later state naming that id, whatever
that state holds, so a few bytes of references stand for a whole part of the file. Each edit keeps the file a
valid skops file that names trusted types only:

- :func:`nested_lists`: a list of ``fan_out`` references to a list of ``fan_out`` references ... ``depth`` levels
  deep, as an attribute of the model (skops' type audit walks ``fan_out ** depth`` nodes);
- :func:`wide_forest`: a forest's ``estimators_`` made ``copies`` references to its first tree (predict runs
  each one);
- :func:`nested_reduction`: a reduction whose predictors are ``copies`` references to the reduction itself
  taken as a predictor of a second one (a reduction of reductions);
- :func:`deep_list`: lists nested ``depth`` levels deep;
- :func:`cycle`: a list holding a reference to itself;
- :func:`shared_array_file`: ``copies`` states reading one array file of the archive (each read is a copy).
"""

import copy
import io
import json
import zipfile

SCHEMA = "schema.json"
_LIST = {"__class__": "list", "__module__": "builtins", "__loader__": "ListNode"}
_STR_TYPE = {"__class__": "str", "__module__": "builtins", "__loader__": "TypeNode"}


def read_schema(model_bytes: bytes) -> tuple[dict, dict]:
    """``(schema, the other entries)`` of a skops file."""
    with zipfile.ZipFile(io.BytesIO(model_bytes)) as archive:
        entries = {name: archive.read(name) for name in archive.namelist()}
    return json.loads(entries.pop(SCHEMA)), entries


def write_schema(schema: dict, entries: dict) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(SCHEMA, json.dumps(schema))
        for name, data in entries.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def reference(state: dict) -> dict:
    """The smallest state skops reads as the node of ``state``'s id."""
    return {key: state[key] for key in ("__class__", "__module__", "__loader__", "__id__")}


def _attributes(schema: dict) -> dict:
    """The DictNode of an ObjectNode's attributes (the model's, or a pipeline's last step's)."""
    node = schema
    if node["__class__"] == "Pipeline":
        steps = node["content"]["content"]["steps"]["content"]
        node = steps[-1]["content"][1]
    return node["content"]


def add_attribute(schema: dict, name: str, state: dict) -> None:
    """Give the model (or its last step) one more attribute (skops pairs each key with a key type)."""
    attributes = _attributes(schema)
    attributes["content"][name] = state
    attributes["key_types"]["content"].append(dict(_STR_TYPE, __id__=attributes["key_types"]["content"][0]["__id__"]))


def nested_lists(model_bytes: bytes, fan_out: int = 30, depth: int = 6) -> bytes:
    schema, entries = read_schema(model_bytes)
    level = dict(_LIST, content=[], __id__=9_000_000)
    for number in range(1, depth + 1):
        level = dict(_LIST, __id__=9_000_000 + number, content=[level] + [reference(level)] * (fan_out - 1))
    add_attribute(schema, "planted", level)
    return write_schema(schema, entries)


def deep_list(model_bytes: bytes, depth: int) -> bytes:
    schema, entries = read_schema(model_bytes)
    level = dict(_LIST, content=[], __id__=9_100_000)
    for number in range(1, depth + 1):
        level = dict(_LIST, __id__=9_100_000 + number, content=[level])
    add_attribute(schema, "planted", level)
    return write_schema(schema, entries)


def cycle(model_bytes: bytes) -> bytes:
    schema, entries = read_schema(model_bytes)
    outer = dict(_LIST, __id__=9_200_000, content=[])
    outer["content"].append(reference(outer))
    add_attribute(schema, "planted", outer)
    return write_schema(schema, entries)


def _find(state, predicate):
    stack = [state]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if predicate(value):
                return value
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    raise LookupError("no such state in the schema")


def wide_forest(model_bytes: bytes, copies: int) -> bytes:
    """A forest's ``estimators_`` as ``copies`` references to its first tree."""
    schema, entries = read_schema(model_bytes)
    forest = _find(schema, lambda s: s.get("__class__") == "RandomForestClassifier" and "content" in s)
    trees = forest["content"]["content"]["estimators_"]
    trees["content"] = [trees["content"][0]] + [reference(trees["content"][0])] * (copies - 1)
    return write_schema(schema, entries)


def _renumbered(state: dict, entries: dict) -> dict:
    """``state`` with ids of its own and its own copies of the array files it reads (a second, separate part)."""
    stack = [state]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if isinstance(value.get("__id__"), int):
                value["__id__"] += 100_000_000
            if isinstance(value.get("file"), str):
                entries["copy-" + value["file"]] = entries[value["file"]]
                value["file"] = "copy-" + value["file"]
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return state


def nested_reduction(model_bytes: bytes, copies: int) -> bytes:
    """A reduction whose ``predictors_`` are ``copies`` references to a copy of itself, weighted alike."""
    import numpy as np

    schema, entries = read_schema(model_bytes)
    outer = _find(schema, lambda s: s.get("__module__", "").startswith("fairops.reductions") and "content" in s)
    inner = _renumbered(copy.deepcopy(outer), entries)
    attributes = outer["content"]["content"]
    attributes["predictors_"]["content"] = [inner] + [reference(inner)] * (copies - 1)
    weights = attributes["weights_"]
    buffer = io.BytesIO()
    np.save(buffer, np.full(copies, 1.0 / copies), allow_pickle=False)
    entries[weights["file"]] = buffer.getvalue()
    return write_schema(schema, entries)


def shared_array_file(model_bytes: bytes, copies: int) -> bytes:
    """A list of ``copies`` array states with ids of their own, all reading the model's first array file."""
    schema, entries = read_schema(model_bytes)
    array = _find(schema, lambda s: s.get("__loader__") == "NdArrayNode" and "file" in s)
    states = [dict(array, __id__=9_400_000 + number) for number in range(copies)]
    add_attribute(schema, "planted", dict(_LIST, __id__=9_399_999, content=states))
    return write_schema(schema, entries)
