"""Checks of a LightGBM model text before LightGBM's own parser sees it.

A ``Booster`` saved by skops holds its model as text, and unpickling it hands that text to
LightGBM's C++ parser, whose ``predict`` then follows the trees' child indices unchecked: an index
out of range reads outside the tree, a cycle never ends. :func:`check_model_text` refuses, with a
``ValueError`` naming the tree and field, a text whose trees are not well formed: lengths that
disagree with ``num_leaves``, features beyond ``max_feature_idx``, thresholds or leaf values that
are not finite, child indices out of range, a node reached twice or never, a cycle, categorical
splits that point past their bitsets, linear trees (fairops never fits them), ``tree_sizes``
that do not match the trees, and a header that is not a binary classifier's (one class, one tree per
iteration, objective ``binary sigmoid:<positive number>``).

>>> text = ("tree\\nversion=v4\\nnum_class=1\\nnum_tree_per_iteration=1\\nlabel_index=0\\nmax_feature_idx=0\\n"
...         "objective=binary sigmoid:1\\nfeature_names=a\\nfeature_infos=none\\n\\nTree=0\\nnum_leaves=2\\n"
...         "num_cat=0\\nsplit_feature=0\\n"
...         "threshold=0.5\\ndecision_type=2\\nleft_child=-1\\nright_child=-2\\nleaf_value=0.1 0.2\\n"
...         "is_linear=0\\nshrinkage=1\\n\\n\\nend of trees\\n")
>>> check_model_text(text)
1
>>> check_model_text(text.replace("right_child=-2", "right_child=0"))
Traceback (most recent call last):
...
fairops.errors.InputError: LightGBM tree 0: right_child[0] = 0 points back at node 0 (a cycle or a node reached twice)
"""

from __future__ import annotations

import math

from ..errors import InputError

_MAX_LEAVES = 1 << 17  # LightGBM caps num_leaves at 131072
_INTEGER_FIELDS = ("split_feature", "decision_type", "left_child", "right_child", "leaf_count", "internal_count",
                   "cat_boundaries", "cat_threshold")


def _fields(block: str, where: str) -> dict:
    fields = {}
    for line in block.splitlines():
        if "=" in line:
            key, _, value = line.partition("=")
            if key in fields:
                raise InputError(f"{where}: field {key!r} appears twice")
            fields[key] = value
    return fields


def _numbers(fields: dict, key: str, count: int | None, where: str) -> list:
    text = fields.get(key, "")
    try:
        values = [int(v) if key in _INTEGER_FIELDS else float(v) for v in text.split()]
    except ValueError:
        raise InputError(f"{where}: {key} holds something other than numbers: {text[:80]!r}") from None
    if count is not None and len(values) != count:
        raise InputError(f"{where}: {key} has {len(values)} entries, num_leaves says {count}")
    if key not in _INTEGER_FIELDS and not all(math.isfinite(v) for v in values):
        raise InputError(f"{where}: {key} holds a value that is not finite")
    return values


def _integer(fields: dict, key: str, where: str, low: int, high: int) -> int:
    try:
        value = int(fields.get(key, ""))
    except ValueError:
        raise InputError(f"{where}: {key} is {fields.get(key)!r}, not a whole number") from None
    if not low <= value <= high:
        raise InputError(f"{where}: {key} = {value} is outside [{low}, {high}]")
    return value


def _check_structure(left: list, right: list, n_leaves: int, where: str) -> None:
    """Every internal node and leaf reached exactly once from node 0: no cycle, nothing out of range."""
    seen_nodes, seen_leaves, stack = {0}, set(), [0]
    while stack:
        node = stack.pop()
        for name, children in (("left_child", left), ("right_child", right)):
            child = children[node]
            if child >= 0:
                if child >= len(left):
                    raise InputError(f"{where}: {name}[{node}] = {child} is beyond the {len(left)} internal nodes")
                if child in seen_nodes:
                    raise InputError(f"{where}: {name}[{node}] = {child} points back at node {child} "
                                     "(a cycle or a node reached twice)")
                seen_nodes.add(child)
                stack.append(child)
            else:
                leaf = ~child
                if leaf >= n_leaves:
                    raise InputError(f"{where}: {name}[{node}] = {child} names leaf {leaf} of {n_leaves}")
                if leaf in seen_leaves:
                    raise InputError(f"{where}: leaf {leaf} is reached twice")
                seen_leaves.add(leaf)
    if len(seen_leaves) != n_leaves:
        raise InputError(f"{where}: {n_leaves - len(seen_leaves)} of {n_leaves} leaves are never reached")


def _check_categorical(fields: dict, decision: list, threshold: list, where: str) -> None:
    n_cat = _integer(fields, "num_cat", where, 0, max(len(decision), 0))
    boundaries = _numbers(fields, "cat_boundaries", n_cat + 1 if n_cat else None, where)
    bitsets = _numbers(fields, "cat_threshold", None, where)
    if n_cat and (boundaries[0] != 0 or boundaries[-1] != len(bitsets)
                  or any(b > a for a, b in zip(boundaries[1:], boundaries))):
        raise InputError(f"{where}: cat_boundaries {boundaries[:8]} do not rise from 0 to the "
                         f"{len(bitsets)} entries of cat_threshold")
    for node, kind in enumerate(decision):
        if not 0 <= kind < 16:
            raise InputError(f"{where}: decision_type[{node}] = {kind} is not a LightGBM decision type")
        if kind & 1 and not (threshold[node] == int(threshold[node]) and 0 <= threshold[node] < n_cat):
            raise InputError(f"{where}: categorical split {node} names bitset {threshold[node]} of {n_cat}")


def check_tree(block: str, index: int, n_features: int) -> None:
    """One ``Tree=`` block (see the module docstring)."""
    where = f"LightGBM tree {index}"
    fields = _fields(block, where)
    if fields.get("is_linear", "0") != "0":
        raise InputError(f"{where}: is a linear tree; fairops never fits them")
    n_leaves = _integer(fields, "num_leaves", where, 1, _MAX_LEAVES)
    n_internal = n_leaves - 1
    split_feature = _numbers(fields, "split_feature", n_internal, where)
    bad = next((f for f in split_feature if not 0 <= f < n_features), None)
    if bad is not None:
        raise InputError(f"{where}: split_feature {bad} is outside the model's {n_features} features")
    threshold = _numbers(fields, "threshold", n_internal, where)
    decision = _numbers(fields, "decision_type", n_internal, where)
    left = _numbers(fields, "left_child", n_internal, where)
    right = _numbers(fields, "right_child", n_internal, where)
    _numbers(fields, "leaf_value", n_leaves, where)
    _numbers(fields, "shrinkage", 1, where)
    for key, count in (("leaf_weight", n_leaves), ("leaf_count", n_leaves), ("split_gain", n_internal),
                       ("internal_value", n_internal), ("internal_weight", n_internal),
                       ("internal_count", n_internal)):
        if fields.get(key, "").strip():  # informative fields, empty on one-leaf trees
            _numbers(fields, key, count, where)
    _check_categorical(fields, decision, threshold, where)
    if n_internal:
        _check_structure(left, right, n_leaves, where)


def _check_objective(objective) -> None:
    """A binary classifier's objective, the one LightGBM writes for it: ``binary sigmoid:<positive number>``.

    The objective line decides how many scores a row gets and how they become probabilities: a
    multiclass one with more classes than the text has trees per iteration writes past LightGBM's
    buffers (a crash), and others answer raw scores or NaN as if they were probabilities.
    """
    kind, _, sigmoid = (objective or "").partition(" sigmoid:")
    try:
        fits = kind == "binary" and 0 < float(sigmoid) < math.inf
    except ValueError:
        fits = False
    if not fits:
        raise InputError(f"LightGBM model header: objective {str(objective)[:80]!r} is not a binary classifier's "
                         "('binary sigmoid:<positive number>'), the only LightGBM model fairops fits")


def check_model_text(text: str) -> int:
    """Refuse a LightGBM model text whose trees are not well formed; return the number of trees."""
    if not isinstance(text, str):
        raise TypeError(f"a LightGBM model is text, got {type(text).__name__}")
    head, _, rest = text.partition("\nTree=")
    header = _fields(head, "LightGBM model header")
    n_features = _integer(header, "max_feature_idx", "LightGBM model header", 0, 1 << 24) + 1
    per_iteration = _integer(header, "num_tree_per_iteration", "LightGBM model header", 1, 1)
    _integer(header, "num_class", "LightGBM model header", 1, 1)
    _check_objective(header.get("objective"))
    if len(header.get("feature_names", "").split()) != n_features:
        raise InputError(f"LightGBM model header: feature_names does not list max_feature_idx + 1 = {n_features}")
    trees_text, found, _ = ("Tree=" + rest).partition("end of trees") if rest else ("", "", "")
    if rest and not found:
        raise InputError("LightGBM model text has no 'end of trees' line")
    blocks = trees_text.split("Tree=")[1:] if trees_text else []
    if len(blocks) % per_iteration:
        raise InputError(f"LightGBM model holds {len(blocks)} trees, not a multiple of {per_iteration} per iteration")
    if "tree_sizes" in header:
        sizes = [len("Tree=" + block) for block in blocks]
        if header["tree_sizes"].split() != [str(size) for size in sizes]:
            raise InputError("LightGBM model header: tree_sizes do not match the trees that follow")
    for index, block in enumerate(blocks):
        number, _, body = block.partition("\n")
        if number.strip() != str(index):
            raise InputError(f"LightGBM tree {index} is numbered {number.strip()[:20]!r}")
        check_tree(body, index, n_features)
    return len(blocks)
