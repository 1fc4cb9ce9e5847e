# cython: language_level=3
"""Hot loop of SCAFF: histogram split search, depth-first tree growth, forest prediction.

Called only from ``fairops.scaff._native``, which validates and lays out the arrays.
Both heavy functions run without the GIL, so trees grown in a thread pool run in parallel.

Split criterion (node-local, two children, counts only)::

    AUC(class) = 0.5 + |P(left | class 1) - P(left | class 0)| / 2
    SG = (1 - theta) * (AUC_Y - 0.5) - theta * (AUC_S - 0.5)

AUC_S is the max or the mean over the one-vs-rest AUCs of every sensitive group present
in the node (a group that is absent, or that is the whole node, has no AUC there).
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
    const cnp.int32_t[::1] n_bins,         # (n_features,)
    const cnp.uint8_t[::1] y,              # (n_samples,) 0/1
    const cnp.int32_t[:, ::1] groups,      # (n_samples, n_columns): global group id per column
    int n_groups,
    const double[::1] weight,              # (n_samples,) bootstrap counts
    cnp.intp_t[::1] samples,               # in-bag sample ids; reordered in place
    int max_depth,                         # < 0: unlimited
    int max_features,
    double theta,
    int aggregate,                         # 0 = max, 1 = mean
    u64 seed,
    double min_gain,
):
    """Grow one tree; returns its node arrays trimmed to the number of nodes."""
    cdef Py_ssize_t n_features = binned.shape[0]
    cdef Py_ssize_t n_columns = groups.shape[1]
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
    cdef cnp.int32_t[::1] node_feature = feature_arr
    cdef cnp.int32_t[::1] node_bin = bin_arr
    cdef cnp.int32_t[::1] node_left = left_arr
    cdef cnp.int32_t[::1] node_right = right_arr
    cdef double[::1] node_value = value_arr
    cdef double[::1] node_weight = node_weight_arr
    cdef double[::1] node_gain = gain_arr

    # Work buffers, allocated once per tree.
    cdef Py_ssize_t n_groups_alloc = n_groups if n_groups > 0 else 1
    cdef double[::1] hist_w = np.zeros(max_bin_count, dtype=np.float64)
    cdef double[::1] hist_y = np.zeros(max_bin_count, dtype=np.float64)
    cdef double[::1] hist_g = np.zeros(max_bin_count * n_groups_alloc, dtype=np.float64)
    cdef double[::1] group_total = np.zeros(n_groups_alloc, dtype=np.float64)
    cdef double[::1] group_left = np.zeros(n_groups_alloc, dtype=np.float64)
    cdef cnp.intp_t[::1] feature_order = np.arange(n_features, dtype=np.intp)
    # Stack of pending nodes: start, end, depth, parent, is_left. Depth-first growth keeps
    # at most one pending sibling per level plus two fresh children: max_depth + 1 entries.
    cdef Py_ssize_t stack_size = capacity + 2
    if max_depth >= 0:
        stack_size = min(stack_size, max_depth + 2)
    cdef cnp.intp_t[:, ::1] stack = np.zeros((stack_size, 5), dtype=np.intp)

    cdef u64 rng_state = seed
    cdef Py_ssize_t n_nodes = 0, top = 0
    cdef Py_ssize_t start, end, depth, parent, node, p, i, j, c, g, b, nb, swap_with, mid
    cdef Py_ssize_t best_feature, best_bin
    cdef double total_w, total_y, total_n, wi, left_w, left_y, auc_y, auc_s, gain, best_gain
    cdef double group_auc, group_sum, label_part
    cdef int group_count
    cdef bint need_groups = theta > 0.0 and n_groups > 0 and n_columns > 0
    cdef bint can_split
    cdef cnp.intp_t tmp
    cdef int draw = max_features
    if draw > n_features:
        draw = <int>n_features
    if draw < 1:
        draw = 1

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
            node_weight[node] = total_w
            node_value[node] = total_y / total_w if total_w > 0 else 0.0

            # A pure node has AUC_Y = 0.5, so SG <= 0 for every split: stop early.
            can_split = (
                (max_depth < 0 or depth < max_depth)
                and end - start >= 2
                and total_y > 0.0
                and total_n > 0.0
                and theta < 1.0
            )
            if not can_split:
                continue

            best_gain = min_gain
            best_feature = -1
            best_bin = -1
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
                if need_groups:
                    memset(&hist_g[0], 0, nb * n_groups * sizeof(double))
                    for p in range(start, end):
                        i = samples[p]
                        b = binned[f, i]
                        wi = weight[i]
                        hist_w[b] += wi
                        hist_y[b] += wi * y[i]
                        for c in range(n_columns):
                            hist_g[b * n_groups + groups[i, c]] += wi
                    memset(&group_left[0], 0, n_groups * sizeof(double))
                else:
                    for p in range(start, end):
                        i = samples[p]
                        b = binned[f, i]
                        wi = weight[i]
                        hist_w[b] += wi
                        hist_y[b] += wi * y[i]

                left_w = 0.0
                left_y = 0.0
                for b in range(nb - 1):
                    if hist_w[b] == 0.0:
                        continue  # same partition as the previous threshold
                    left_w += hist_w[b]
                    left_y += hist_y[b]
                    if need_groups:
                        for g in range(n_groups):
                            group_left[g] += hist_g[b * n_groups + g]
                    if left_w >= total_w:
                        break
                    auc_y = 0.5 + 0.5 * fabs(left_y / total_y - (left_w - left_y) / total_n)
                    label_part = (1.0 - theta) * (auc_y - 0.5)
                    if label_part <= best_gain:
                        continue  # the sensitive term can only lower the gain
                    if need_groups:
                        auc_s = 0.5
                        group_sum = 0.0
                        group_count = 0
                        for g in range(n_groups):
                            if group_total[g] <= 0.0 or group_total[g] >= total_w:
                                continue
                            group_auc = 0.5 + 0.5 * fabs(
                                group_left[g] / group_total[g]
                                - (left_w - group_left[g]) / (total_w - group_total[g])
                            )
                            if aggregate == 0:
                                if group_auc > auc_s:
                                    auc_s = group_auc
                            else:
                                group_sum += group_auc
                                group_count += 1
                        if aggregate != 0 and group_count > 0:
                            auc_s = group_sum / group_count
                        gain = label_part - theta * (auc_s - 0.5)
                    else:
                        gain = label_part
                    if gain > best_gain:
                        best_gain = gain
                        best_feature = f
                        best_bin = b

            if best_feature < 0:
                continue

            node_feature[node] = <cnp.int32_t>best_feature
            node_bin[node] = <cnp.int32_t>best_bin
            node_gain[node] = best_gain
            # Partition samples[start:end]: bin <= best_bin first.
            i = start
            j = end - 1
            while i <= j:
                if binned[best_feature, samples[i]] <= best_bin:
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
    )


def predict_forest(
    const double[:, ::1] X,
    const cnp.int32_t[::1] feature,
    const double[::1] threshold,
    const cnp.int32_t[::1] left,
    const cnp.int32_t[::1] right,
    const double[::1] value,
    const cnp.int64_t[::1] offsets,        # (n_trees + 1,) start of each tree's nodes
    double[::1] out,                       # (n_rows,) mean leaf value, written here
):
    """Average over the trees of the leaf value reached by each row (x <= threshold goes left)."""
    cdef Py_ssize_t n_rows = X.shape[0]
    cdef Py_ssize_t n_trees = offsets.shape[0] - 1
    cdef Py_ssize_t r, t, base, node
    cdef double total
    with nogil:
        for r in range(n_rows):
            total = 0.0
            for t in range(n_trees):
                base = offsets[t]
                node = 0
                while feature[base + node] >= 0:
                    if X[r, feature[base + node]] <= threshold[base + node]:
                        node = left[base + node]
                    else:
                        node = right[base + node]
                total += value[base + node]
            out[r] = total / n_trees
