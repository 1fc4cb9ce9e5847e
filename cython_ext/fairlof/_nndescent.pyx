# cython: language_level=3
"""Compiled steps of fairops' NN-descent neighbour graph (``fairops.fairlof._nndescent_search``).

NN-descent (Dong, Moses and Li, WWW 2011) improves a k-nearest-neighbour graph by comparing, for
every row, the rows around it: two rows that share a neighbour are likely neighbours of each other.
The graph is one max-heap per row (``heap_d`` squared float32 distances with the largest at slot 0,
``heap_i`` row ids, ``heap_new`` whether the entry arrived since the row last took part in a join).
Each step here works on a range of rows or on the rows ``row % n_threads == thread`` so that
Python threads can run them side by side without locks; ``nndescent_search`` drives the loop.
Random choices come from a hash of (seed, row, slot, round), so the graph does not depend on
how the work was split between threads. Called only from ``fairops.fairlof._nndescent_search``,
which makes dtypes, shapes and contiguity right first.
"""

import numpy as np

cimport numpy as cnp
from libc.math cimport INFINITY

cnp.import_array()


cdef inline unsigned long long _mix(unsigned long long x) noexcept nogil:
    """splitmix64's finaliser: a well spread 64-bit hash of x."""
    x = x + 0x9E3779B97F4A7C15ULL
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL
    return x ^ (x >> 31)


cdef inline unsigned long long _hash(unsigned long long seed, unsigned long long a, unsigned long long b,
                                     unsigned long long c) noexcept nogil:
    return _mix(_mix(_mix(seed ^ a) ^ b) ^ c)


cdef inline float _sq_distance(const float[:, ::1] X, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """Squared distance of rows a and b, summed in four interleaved parts (one running sum would
    make every addition wait for the previous one)."""
    cdef Py_ssize_t f, d = X.shape[1]
    cdef const float* x = &X[a, 0]
    cdef const float* y = &X[b, 0]
    cdef float s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, diff
    for f in range(0, d - 3, 4):
        diff = x[f] - y[f]
        s0 = s0 + diff * diff
        diff = x[f + 1] - y[f + 1]
        s1 = s1 + diff * diff
        diff = x[f + 2] - y[f + 2]
        s2 = s2 + diff * diff
        diff = x[f + 3] - y[f + 3]
        s3 = s3 + diff * diff
    for f in range(d - d % 4, d):
        diff = x[f] - y[f]
        s0 = s0 + diff * diff
    return (s0 + s1) + (s2 + s3)


cdef inline void _sift_down(float* values, int* ids, unsigned char* flags, Py_ssize_t size) noexcept nogil:
    """Restore the max-heap after slot 0 was replaced."""
    cdef Py_ssize_t i = 0, child, swap
    cdef float value = values[0]
    cdef int index = ids[0]
    cdef unsigned char flag = flags[0]
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        swap = child
        if child + 1 < size and values[child + 1] > values[child]:
            swap = child + 1
        if values[swap] <= value:
            break
        values[i] = values[swap]
        ids[i] = ids[swap]
        flags[i] = flags[swap]
        i = swap
    values[i] = value
    ids[i] = index
    flags[i] = flag


cdef inline int _push(float* values, int* ids, unsigned char* flags, Py_ssize_t size, float value,
                      int index) noexcept nogil:
    """Offer ``index`` at ``value`` to one row's heap; 1 if it entered."""
    cdef Py_ssize_t s
    if value >= values[0]:
        return 0
    for s in range(size):
        if ids[s] == index:
            return 0
    values[0] = value
    ids[0] = index
    flags[0] = 1
    _sift_down(values, ids, flags, size)
    return 1


def fill_random(const float[:, ::1] X, float[:, ::1] heap_d, int[:, ::1] heap_i, unsigned char[:, ::1] heap_new,
                unsigned long long seed, Py_ssize_t start, Py_ssize_t stop):
    """Rows [start, stop) whose heap still has empty slots (id -1) get distinct random other rows there."""
    cdef Py_ssize_t n = X.shape[0], K = heap_i.shape[1], i, s, empty
    cdef unsigned long long attempt
    cdef int candidate
    with nogil:
        for i in range(start, stop):
            empty = 0
            for s in range(K):
                empty += heap_i[i, s] < 0
            attempt = 0
            while empty > 0:
                candidate = <int>(_hash(seed, i, attempt, 0) % <unsigned long long>n)
                attempt += 1
                if candidate != i and _push(&heap_d[i, 0], &heap_i[i, 0], &heap_new[i, 0], K,
                                            _sq_distance(X, i, candidate), candidate):
                    empty -= 1


def rp_tree_leaves(const float[:, ::1] X, int[::1] order, Py_ssize_t leaf_size, unsigned long long seed):
    """Reorder ``order`` (row ids) in place so that the leaves of a random projection tree are
    contiguous, and return the leaves' start offsets (ending with n).

    A node of more than ``leaf_size`` rows is split by the hyperplane halfway between two of its
    rows chosen at random (the side nearer to each); a split leaving either side under
    ``leaf_size / 2`` rows cuts the node at its middle instead, so every leaf holds between
    ``leaf_size / 2`` and ``leaf_size`` rows (when n >= leaf_size / 2).
    """
    cdef Py_ssize_t n = order.shape[0], d = X.shape[1]
    cdef Py_ssize_t depth_max = 128, top = 0, lo, hi, left, right, f, count = 0, size, half
    cdef int a, b, tmp
    cdef double offset, side, norm_a, norm_b
    cdef unsigned long long node = 0
    stack_array = np.empty((depth_max, 2), dtype=np.intp)
    starts_array = np.empty(n + 1, dtype=np.intp)
    cdef Py_ssize_t[:, ::1] stack = stack_array
    cdef Py_ssize_t[::1] starts = starts_array
    with nogil:
        stack[0, 0] = 0
        stack[0, 1] = n
        top = 1
        while top > 0:
            top -= 1
            lo = stack[top, 0]
            hi = stack[top, 1]
            size = hi - lo
            if size <= leaf_size or top + 2 >= depth_max:
                starts[count] = lo
                count += 1
                continue
            node += 1
            a = order[lo + <Py_ssize_t>(_hash(seed, node, 1, 0) % <unsigned long long>size)]
            b = order[lo + <Py_ssize_t>(_hash(seed, node, 2, 0) % <unsigned long long>size)]
            # side of row r: <r, a - b> against the midpoint's <(a + b) / 2, a - b>
            offset = 0.0
            for f in range(d):
                offset = offset + 0.5 * (X[a, f] + X[b, f]) * (X[a, f] - X[b, f])
            left = lo
            right = hi - 1
            while left <= right:
                side = -offset
                for f in range(d):
                    side = side + X[order[left], f] * (X[a, f] - X[b, f])
                if side >= 0:
                    left += 1
                else:
                    tmp = order[left]
                    order[left] = order[right]
                    order[right] = tmp
                    right -= 1
            half = leaf_size // 2
            if left - lo < half or hi - left < half:
                left = lo + size // 2
            # the second half is pushed first, so leaves come out in order
            stack[top, 0] = left
            stack[top, 1] = hi
            stack[top + 1, 0] = lo
            stack[top + 1, 1] = left
            top += 2
        starts[count] = n
    return starts_array[:count + 1].copy()


def join_leaves(const float[:, ::1] X, float[:, ::1] heap_d, int[:, ::1] heap_i, unsigned char[:, ::1] heap_new,
                const int[::1] order, const Py_ssize_t[::1] starts, Py_ssize_t first, Py_ssize_t last):
    """Offer every pair of rows within each leaf ``first`` to ``last - 1`` to both rows' heaps.
    The leaves of one tree hold disjoint rows, so threads given different leaves never meet."""
    cdef Py_ssize_t K = heap_i.shape[1], leaf, a, b
    cdef int p, q
    cdef float value
    with nogil:
        for leaf in range(first, last):
            for a in range(starts[leaf], starts[leaf + 1]):
                p = order[a]
                for b in range(a + 1, starts[leaf + 1]):
                    q = order[b]
                    value = _sq_distance(X, p, q)
                    _push(&heap_d[p, 0], &heap_i[p, 0], &heap_new[p, 0], K, value, q)
                    _push(&heap_d[q, 0], &heap_i[q, 0], &heap_new[q, 0], K, value, p)


cdef inline void _offer_candidate(int[:, ::1] cand, unsigned int[:, ::1] priority, Py_ssize_t row, int index,
                                  unsigned int key) noexcept nogil:
    """Keep in ``cand[row]`` the candidates of smallest random key (a max-heap on the key, no repeats)."""
    cdef Py_ssize_t size = cand.shape[1], s, i, child, swap
    if key >= priority[row, 0]:
        return
    for s in range(size):
        if cand[row, s] == index:
            return
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        swap = child
        if child + 1 < size and priority[row, child + 1] > priority[row, child]:
            swap = child + 1
        if priority[row, swap] <= key:
            break
        priority[row, i] = priority[row, swap]
        cand[row, i] = cand[row, swap]
        i = swap
    priority[row, i] = key
    cand[row, i] = index


def sample_candidates(const int[:, ::1] heap_i, const unsigned char[:, ::1] heap_new, int[:, ::1] new_cand,
                      unsigned int[:, ::1] new_key, int[:, ::1] old_cand, unsigned int[:, ::1] old_key,
                      unsigned long long seed, Py_ssize_t round_, Py_ssize_t thread, Py_ssize_t n_threads):
    """Each row's join candidates: its neighbours and the rows that have it as a neighbour, new and old
    apart, at most ``new_cand.shape[1]`` of each chosen at random. This call fills the rows
    ``row % n_threads == thread`` (the arrays must start at -1 / the largest key)."""
    cdef Py_ssize_t n = heap_i.shape[0], K = heap_i.shape[1], i, s
    cdef int j
    cdef unsigned int key
    with nogil:
        for i in range(n):
            for s in range(K):
                j = heap_i[i, s]
                if j < 0:
                    continue
                key = <unsigned int>(_hash(seed, i, j, round_ + 1) >> 32)
                if heap_new[i, s]:
                    if i % n_threads == thread:
                        _offer_candidate(new_cand, new_key, i, j, key)
                    if j % n_threads == thread:
                        _offer_candidate(new_cand, new_key, j, <int>i, key)
                else:
                    if i % n_threads == thread:
                        _offer_candidate(old_cand, old_key, i, j, key)
                    if j % n_threads == thread:
                        _offer_candidate(old_cand, old_key, j, <int>i, key)


def mark_sampled_old(const int[:, ::1] heap_i, unsigned char[:, ::1] heap_new, const int[:, ::1] new_cand,
                     Py_ssize_t start, Py_ssize_t stop):
    """A new neighbour chosen as a join candidate of its row is old from now on (rows [start, stop))."""
    cdef Py_ssize_t K = heap_i.shape[1], width = new_cand.shape[1], i, s, c
    with nogil:
        for i in range(start, stop):
            for s in range(K):
                if not heap_new[i, s]:
                    continue
                for c in range(width):
                    if new_cand[i, c] == heap_i[i, s]:
                        heap_new[i, s] = 0
                        break


cdef inline Py_ssize_t _join(const float[:, ::1] X, const float[:, ::1] heap_d, int p, int q, int[:, ::1] updates,
                             float[::1] update_d, Py_ssize_t count) noexcept nogil:
    """Record (p, q) as an update when it is nearer than either row's farthest neighbour; the new count."""
    cdef float value
    if q < 0 or q == p:
        return count
    value = _sq_distance(X, p, q)
    if value < heap_d[p, 0] or value < heap_d[q, 0]:
        updates[count, 0] = p
        updates[count, 1] = q
        update_d[count] = value
        count += 1
    return count


def local_join(const float[:, ::1] X, const float[:, ::1] heap_d, const int[:, ::1] new_cand,
               const int[:, ::1] old_cand, Py_ssize_t start, Py_ssize_t stop, int[:, ::1] updates,
               float[::1] update_d):
    """Compare the candidates around rows [start, stop): every new with every later new, every new
    with every old. A pair nearer than either row's farthest neighbour becomes an update
    (``updates[u] = (a, b)``, ``update_d[u]`` its squared distance). Returns the number of updates;
    ``updates`` must hold ``(stop - start) * (w (w - 1) / 2 + w * w_old)`` rows."""
    cdef Py_ssize_t width = new_cand.shape[1], old_width = old_cand.shape[1], i, a, b, count = 0
    cdef int p
    with nogil:
        for i in range(start, stop):
            for a in range(width):
                p = new_cand[i, a]
                if p < 0:
                    continue
                for b in range(a + 1, width):
                    count = _join(X, heap_d, p, new_cand[i, b], updates, update_d, count)
                for b in range(old_width):
                    count = _join(X, heap_d, p, old_cand[i, b], updates, update_d, count)
    return count


def apply_updates(float[:, ::1] heap_d, int[:, ::1] heap_i, unsigned char[:, ::1] heap_new,
                  const int[:, ::1] updates, const float[::1] update_d, Py_ssize_t count, Py_ssize_t thread,
                  Py_ssize_t n_threads):
    """Offer each update's pair to both rows' heaps, for the rows ``row % n_threads == thread``.
    Returns how many entries changed."""
    cdef Py_ssize_t K = heap_i.shape[1], u, changed = 0
    cdef int p, q
    with nogil:
        for u in range(count):
            p = updates[u, 0]
            q = updates[u, 1]
            if p % n_threads == thread:
                changed += _push(&heap_d[p, 0], &heap_i[p, 0], &heap_new[p, 0], K, update_d[u], q)
            if q % n_threads == thread:
                changed += _push(&heap_d[q, 0], &heap_i[q, 0], &heap_new[q, 0], K, update_d[u], p)
    return changed
