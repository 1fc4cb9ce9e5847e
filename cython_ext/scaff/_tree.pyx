# cython: language_level=3
"""Hot loop of SCAFF: histogram split search, depth-first tree growth, forest prediction.

Called only from ``fairops.scaff._native``, which validates and lays out the arrays.
Both heavy functions run without the GIL, so trees grown in a thread pool run in parallel.

Split criterion (node-local, two children, counts only)::

    AUC(class) = 0.5 + |P(left | class 1) - P(left | class 0)| / 2
    SG = (1 - theta) * (AUC_Y - 0.5) - theta * (AUC_S - 0.5)

AUC_S combines the one-vs-rest AUCs of every sensitive group: their max, or the mean per
attribute and then across attributes. A group absent from the node, or making up all of it,
has no AUC there: it counts as AUC 1, the worst case, as the authors' code scores it.

Missing values: a feature that had missing values in fit has one bin more, its last, holding them. Every
threshold is then tried twice, with the missing values sent left and sent right, and once more as "every
value left, the missing ones right" (threshold +inf); the better side is kept per node, as LightGBM and
scikit-learn's HistGradientBoosting learn it. A node that saw no missing value of its split feature sends
them to its heavier child.
"""

import numpy as np

cimport numpy as cnp
from libc.math cimport fabs
from libc.string cimport memset

cnp.import_array()

ctypedef cnp.uint64_t u64



cdef inline u64 _next_random(u64* state) noexcept nogil:
    # splitmix64: small, fast, and good enough to draw feature subsets.
    state[0] += <u64>0x9E3779B97F4A7C15
    cdef u64 z = state[0]
    z = (z ^ (z >> 30)) * <u64>0xBF58476D1CE4E5B9
    z = (z ^ (z >> 27)) * <u64>0x94D049BB133111EB
    return z ^ (z >> 31)


def build_tree(
    const cnp.uint8_t[:, ::1] binned,      # (n_features, n_samples): bin code per value
    const cnp.int32_t[::1] n_bins,         # (n_features,) bins, the missing values' bin included
    const cnp.uint8_t[::1] has_missing,    # (n_features,) 1: the feature's last bin holds its missing values
    const cnp.uint8_t[::1] y,              # (n_samples,) 0/1
    const cnp.int32_t[:, ::1] groups,      # (n_samples, n_columns): global group id per column
    const cnp.int32_t[::1] column_start,   # (n_columns + 1,): column c owns ids column_start[c] ..< [c + 1]
    const double[::1] weight,              # (n_samples,) > 0 for every sample in `samples`
    cnp.intp_t[::1] samples,               # in-bag sample ids; reordered in place
    int max_depth,                         # < 0: unlimited
    int max_features,
    Py_ssize_t min_samples_split,          # a node with fewer samples is a leaf
    Py_ssize_t min_samples_leaf,           # each child keeps at least this many samples
    double theta,
    int aggregate,                         # 0 = max, 1 = mean per attribute, then across attributes
    u64 seed,
    double min_gain,
):
    """Grow one tree; returns its node arrays trimmed to the number of nodes."""
    cdef Py_ssize_t n_features = binned.shape[0]
    cdef Py_ssize_t n_columns = groups.shape[1]
    cdef Py_ssize_t n_groups = column_start[n_columns] if n_columns > 0 else 0
    cdef Py_ssize_t n_in_bag = samples.shape[0]
    cdef Py_ssize_t capacity = 2 * n_in_bag - 1 if n_in_bag > 0 else 1
    if max_depth >= 0 and max_depth < 40:
        capacity = min(capacity, (1 << (max_depth + 1)) - 1)
    cdef int max_bin_count = 1
    cdef Py_ssize_t f
    for f in range(n_features):
        if n_bins[f] > max_bin_count:
            max_bin_count = n_bins[f]

    feature_arr = np.full(capacity, -1, dtype=np.int32)
    bin_arr = np.zeros(capacity, dtype=np.int32)
    left_arr = np.full(capacity, -1, dtype=np.int32)
    right_arr = np.full(capacity, -1, dtype=np.int32)
    value_arr = np.zeros(capacity, dtype=np.float64)
    node_weight_arr = np.zeros(capacity, dtype=np.float64)
    gain_arr = np.zeros(capacity, dtype=np.float64)
    missing_arr = np.zeros(capacity, dtype=np.uint8)
    cdef cnp.int32_t[::1] node_feature = feature_arr
    cdef cnp.int32_t[::1] node_bin = bin_arr
    cdef cnp.int32_t[::1] node_left = left_arr
    cdef cnp.int32_t[::1] node_right = right_arr
    cdef double[::1] node_value = value_arr
    cdef double[::1] node_weight = node_weight_arr
    cdef double[::1] node_gain = gain_arr
    cdef cnp.uint8_t[::1] node_missing_left = missing_arr

    # Work buffers, allocated once per tree.
    cdef Py_ssize_t n_groups_alloc = n_groups if n_groups > 0 else 1
    cdef Py_ssize_t n_columns_alloc = n_columns if n_columns > 0 else 1
    cdef double[::1] hist_w = np.zeros(max_bin_count, dtype=np.float64)
    cdef double[::1] hist_y = np.zeros(max_bin_count, dtype=np.float64)
    cdef cnp.intp_t[::1] hist_n = np.zeros(max_bin_count, dtype=np.intp)
    cdef double[::1] hist_g = np.zeros(max_bin_count * n_groups_alloc, dtype=np.float64)
    cdef double[::1] group_total = np.zeros(n_groups_alloc, dtype=np.float64)
    cdef double[::1] group_left = np.zeros(n_groups_alloc, dtype=np.float64)
    cdef cnp.intp_t[::1] group_column = np.zeros(n_groups_alloc, dtype=np.intp)
    cdef cnp.intp_t[::1] active = np.zeros(n_groups_alloc, dtype=np.intp)
    cdef double[::1] column_sum = np.zeros(n_columns_alloc, dtype=np.float64)
    cdef double[::1] column_fixed = np.zeros(n_columns_alloc, dtype=np.float64)
    cdef double[::1] column_terms = np.zeros(n_columns_alloc, dtype=np.float64)
    cdef cnp.intp_t[::1] feature_order = np.arange(n_features, dtype=np.intp)
    # Stack of pending nodes: start, end, depth, parent, is_left. Depth-first growth keeps
    # at most one pending sibling per level plus two fresh children: max_depth + 1 entries.
    cdef Py_ssize_t stack_size = capacity + 2
    if max_depth >= 0:
        stack_size = min(stack_size, max_depth + 2)
    cdef cnp.intp_t[:, ::1] stack = np.zeros((stack_size, 5), dtype=np.intp)

    cdef u64 rng_state = seed
    cdef Py_ssize_t n_nodes = 0, top = 0
    cdef Py_ssize_t start, end, depth, parent, node, p, i, j, c, g, k, b, nb, last, swap_with, mid
    cdef Py_ssize_t best_feature, best_bin, n_active, n_node, left_n, nv, cand_n, side
    cdef double total_w, total_y, total_n, wi, left_w, left_y, auc_s, gain, best_gain
    cdef double group_auc, label_part, fixed_penalty, cross, label_scale
    cdef double miss_w, miss_y, cand_w, cand_y, cand_g
    cdef Py_ssize_t miss_n
    cdef bint need_groups = theta > 0.0 and n_groups > 0
    cdef bint node_groups, any_absent, can_split, best_missing_left, node_has_missing
    cdef bint count_leaf = min_samples_leaf > 1
    cdef cnp.intp_t tmp
    cdef int draw = max_features
    if draw > n_features:
        draw = <int>n_features
    if draw < 1:
        draw = 1
    for c in range(n_columns):
        for g in range(column_start[c], column_start[c + 1]):
            group_column[g] = c

    with nogil:
        stack[0, 0] = 0
        stack[0, 1] = n_in_bag
        stack[0, 2] = 0
        stack[0, 3] = -1
        stack[0, 4] = 0
        top = 1
        while top > 0:
            top -= 1
            start = stack[top, 0]
            end = stack[top, 1]
            depth = stack[top, 2]
            parent = stack[top, 3]
            node = n_nodes
            n_nodes += 1
            if parent >= 0:
                if stack[top, 4]:
                    node_left[parent] = <cnp.int32_t>node
                else:
                    node_right[parent] = <cnp.int32_t>node

            total_w = 0.0
            total_y = 0.0
            if need_groups:
                memset(&group_total[0], 0, n_groups * sizeof(double))
            for p in range(start, end):
                i = samples[p]
                wi = weight[i]
                total_w += wi
                total_y += wi * y[i]
                if need_groups:
                    for c in range(n_columns):
                        group_total[groups[i, c]] += wi
            total_n = total_w - total_y
            n_node = end - start
            node_weight[node] = total_w
            node_value[node] = total_y / total_w if total_w > 0 else 0.0

            # A pure node has AUC_Y = 0.5, so SG <= 0 for every split: stop early.
            can_split = (
                (max_depth < 0 or depth < max_depth)
                and n_node >= min_samples_split
                and n_node >= 2 * min_samples_leaf
                and total_y > 0.0
                and total_n > 0.0
                and theta < 1.0
            )
            if not can_split:
                continue

            # Which groups have an AUC at this node (present, but not the whole node); each other
            # group counts as AUC 1. When the AUC_S term is the same for every split, it becomes a
            # fixed penalty and the group histograms are skipped.
            node_groups = False
            fixed_penalty = 0.0
            if need_groups:
                n_active = 0
                any_absent = False
                for c in range(n_columns):
                    column_fixed[c] = 0.0
                    column_terms[c] = 0.0
                for g in range(n_groups):
                    c = group_column[g]
                    if g > column_start[c] and column_start[c + 1] - column_start[c] == 2:
                        continue  # a binary attribute's two one-vs-rest AUCs are equal: score the first
                    column_terms[c] += 1.0
                    if group_total[g] > 0.0 and group_total[g] < total_w:
                        active[n_active] = g
                        n_active += 1
                    else:
                        any_absent = True
                        column_fixed[c] += 1.0
                if n_active == 0 or (aggregate == 0 and any_absent):
                    fixed_penalty = theta * 0.5  # AUC_S = 1 whatever the split
                else:
                    node_groups = True

            # A split that gains exactly 0 is made (fair-trees accepts gain >= 0): at theta > 0 the
            # label term can exactly balance the sensitive one, and the children's scores differ.
            best_gain = -min_gain
            label_scale = (1.0 - theta) * 0.5 / (total_y * total_n)
            best_feature = -1
            best_bin = -1
            best_missing_left = False
            if draw < n_features:
                # Partial Fisher-Yates: the first `draw` entries become this node's features.
                for j in range(draw):
                    swap_with = j + <Py_ssize_t>(_next_random(&rng_state) % <u64>(n_features - j))
                    tmp = feature_order[j]
                    feature_order[j] = feature_order[swap_with]
                    feature_order[swap_with] = tmp

            for j in range(draw):
                f = feature_order[j]
                nb = n_bins[f]
                if nb < 2:
                    continue
                memset(&hist_w[0], 0, nb * sizeof(double))
                memset(&hist_y[0], 0, nb * sizeof(double))
                if node_groups:
                    memset(&hist_g[0], 0, nb * n_groups * sizeof(double))
                    memset(&group_left[0], 0, n_groups * sizeof(double))
                    for p in range(start, end):
                        i = samples[p]
                        b = binned[f, i]
                        wi = weight[i]
                        hist_w[b] += wi
                        hist_y[b] += wi * y[i]
                        for c in range(n_columns):
                            hist_g[b * n_groups + groups[i, c]] += wi
                else:
                    for p in range(start, end):
                        i = samples[p]
                        b = binned[f, i]
                        wi = weight[i]
                        hist_w[b] += wi
                        hist_y[b] += wi * y[i]
                if count_leaf:
                    memset(&hist_n[0], 0, nb * sizeof(cnp.intp_t))
                    for p in range(start, end):
                        hist_n[binned[f, samples[p]]] += 1

                # The missing values' bin (the feature's last when it had missing values in fit).
                nv = nb - has_missing[f]
                miss_w = 0.0
                miss_y = 0.0
                miss_n = 0
                if has_missing[f]:
                    miss_w = hist_w[nv]
                    miss_y = hist_y[nv]
                    if count_leaf:
                        miss_n = hist_n[nv]
                node_has_missing = miss_w > 0.0
                # Thresholds after the last non-empty value bin would leave the right child empty, unless
                # the missing values go right alone (threshold +inf, tried at b = last).
                last = nv - 1
                while last > 0 and hist_w[last] == 0.0:
                    last -= 1
                left_w = 0.0
                left_y = 0.0
                left_n = 0
                for b in range(last + 1):
                    if hist_w[b] == 0.0:
                        continue  # same partition as the previous threshold (or no value at all)
                    if b == last and not node_has_missing:
                        break
                    left_w += hist_w[b]
                    left_y += hist_y[b]
                    if node_groups:
                        for k in range(n_active):
                            g = active[k]
                            group_left[g] += hist_g[b * n_groups + g]
                    if count_leaf:
                        left_n += hist_n[b]
                        if n_node - left_n < min_samples_leaf:
                            break  # the right child only shrinks from here
                    # side 0: the missing values go right; side 1: left (not at b = last: nothing would
                    # stay right). A node without missing values has side 0 only.
                    for side in range(2 if node_has_missing and b < last else 1):
                        cand_w = left_w + side * miss_w
                        cand_y = left_y + side * miss_y
                        if count_leaf:
                            cand_n = left_n + side * miss_n
                            if cand_n < min_samples_leaf or n_node - cand_n < min_samples_leaf:
                                continue
                        # |P(left | 1) - P(left | 0)| as one cross product over one node constant:
                        # with counted weights it is exact, so equal AUCs tie bit for bit and the
                        # first threshold in column order wins, as in fair-trees.
                        cross = fabs(cand_y * total_n - (cand_w - cand_y) * total_y)
                        if cross == 0.0:
                            continue  # both children hold the same P(y = 1): SG <= 0 and no score moves
                        label_part = cross * label_scale
                        if label_part - fixed_penalty <= best_gain:
                            continue  # the sensitive term can only lower the gain
                        if node_groups:
                            if aggregate == 0:
                                auc_s = 0.5
                                for k in range(n_active):
                                    g = active[k]
                                    cand_g = group_left[g]
                                    if side:  # (a feature without missing values has no such bin to read)
                                        cand_g += hist_g[nv * n_groups + g]
                                    group_auc = 0.5 + 0.5 * fabs(
                                        cand_g * (total_w - group_total[g])
                                        - (cand_w - cand_g) * group_total[g]
                                    ) / (group_total[g] * (total_w - group_total[g]))
                                    if group_auc > auc_s:
                                        auc_s = group_auc
                            else:
                                for c in range(n_columns):
                                    column_sum[c] = column_fixed[c]
                                for k in range(n_active):
                                    g = active[k]
                                    cand_g = group_left[g]
                                    if side:  # (a feature without missing values has no such bin to read)
                                        cand_g += hist_g[nv * n_groups + g]
                                    column_sum[group_column[g]] += 0.5 + 0.5 * fabs(
                                        cand_g * (total_w - group_total[g])
                                        - (cand_w - cand_g) * group_total[g]
                                    ) / (group_total[g] * (total_w - group_total[g]))
                                auc_s = 0.0
                                for c in range(n_columns):
                                    auc_s += column_sum[c] / column_terms[c]
                                auc_s = auc_s / n_columns
                            gain = label_part - theta * (auc_s - 0.5)
                        else:
                            gain = label_part - fixed_penalty
                        if fabs(gain) <= min_gain:
                            gain = 0.0  # an exact balance of the two terms, up to rounding
                        if gain > best_gain:
                            best_gain = gain
                            best_feature = f
                            # every value left, the missing ones right: the top value bin (threshold +inf)
                            best_bin = nv - 1 if b == last else b
                            if node_has_missing:
                                best_missing_left = side == 1
                            else:  # no missing value here to learn from: the heavier child takes them
                                best_missing_left = cand_w > total_w - cand_w

            if best_feature < 0:
                continue

            node_feature[node] = <cnp.int32_t>best_feature
            node_bin[node] = <cnp.int32_t>best_bin
            node_gain[node] = best_gain
            node_missing_left[node] = best_missing_left
            # Partition samples[start:end]: bin <= best_bin first, and the missing values' bin when they go left.
            nv = n_bins[best_feature] - has_missing[best_feature]
            i = start
            j = end - 1
            while i <= j:
                b = binned[best_feature, samples[i]]
                if b <= best_bin or (best_missing_left and b == nv):
                    i += 1
                else:
                    tmp = samples[i]
                    samples[i] = samples[j]
                    samples[j] = tmp
                    j -= 1
            mid = i
            # Right child pushed first so the left one is grown first.
            stack[top, 0] = mid
            stack[top, 1] = end
            stack[top, 2] = depth + 1
            stack[top, 3] = node
            stack[top, 4] = 0
            top += 1
            stack[top, 0] = start
            stack[top, 1] = mid
            stack[top, 2] = depth + 1
            stack[top, 3] = node
            stack[top, 4] = 1
            top += 1

    return (
        feature_arr[:n_nodes].copy(),
        bin_arr[:n_nodes].copy(),
        left_arr[:n_nodes].copy(),
        right_arr[:n_nodes].copy(),
        value_arr[:n_nodes].copy(),
        node_weight_arr[:n_nodes].copy(),
        gain_arr[:n_nodes].copy(),
        missing_arr[:n_nodes].copy(),
    )


cdef inline Py_ssize_t _leaf(
    const double* x,
    const cnp.int32_t* feature,
    const double* threshold,
    const cnp.int32_t* left,
    const cnp.int32_t* right,
    const cnp.uint8_t* missing_left,
) noexcept nogil:
    """Tree-local id of the leaf row ``x`` reaches (x <= threshold goes left; a missing value, NaN, goes
    to the side its node learnt)."""
    cdef Py_ssize_t node = 0
    cdef double v
    while feature[node] >= 0:
        v = x[feature[node]]
        if v <= threshold[node]:
            node = left[node]
        elif v != v and missing_left[node]:
            node = left[node]
        else:
            node = right[node]
    return node


def predict_forest(
    const double[:, ::1] X,
    const cnp.int32_t[::1] feature,
    const double[::1] threshold,
    const cnp.int32_t[::1] left,
    const cnp.int32_t[::1] right,
    const cnp.uint8_t[::1] missing_left,
    const double[::1] value,
    const cnp.int64_t[::1] offsets,        # (n_trees + 1,) start of each tree's nodes
    double[::1] out,                       # (n_rows,) mean leaf value, written here
):
    """Average over the trees of the leaf value reached by each row."""
    cdef Py_ssize_t n_rows = X.shape[0]
    cdef Py_ssize_t n_trees = offsets.shape[0] - 1
    cdef Py_ssize_t r, t, base
    cdef double total
    with nogil:
        for r in range(n_rows):
            total = 0.0
            for t in range(n_trees):
                base = offsets[t]
                total += value[base + _leaf(&X[r, 0], &feature[base], &threshold[base], &left[base], &right[base],
                                            &missing_left[base])]
            out[r] = total / n_trees


def apply_forest(
    const double[:, ::1] X,
    const cnp.int32_t[::1] feature,
    const double[::1] threshold,
    const cnp.int32_t[::1] left,
    const cnp.int32_t[::1] right,
    const cnp.uint8_t[::1] missing_left,
    const cnp.int64_t[::1] offsets,        # (n_trees + 1,) start of each tree's nodes
    cnp.int64_t[:, ::1] out,               # (n_rows, n_trees) tree-local leaf id, written here
):
    """The leaf each row reaches in each tree."""
    cdef Py_ssize_t n_rows = X.shape[0]
    cdef Py_ssize_t n_trees = offsets.shape[0] - 1
    cdef Py_ssize_t r, t, base
    with nogil:
        for r in range(n_rows):
            for t in range(n_trees):
                base = offsets[t]
                out[r, t] = _leaf(&X[r, 0], &feature[base], &threshold[base], &left[base], &right[base],
                                  &missing_left[base])
