# cython: language_level=3
"""Compiled parts of fairops' exact k-nearest-neighbour search (Euclidean), and the exact re-ranking
the approximate search uses too.

A tile of float32 (or float64) inner products ``-2 <x_i, x_j>`` (from BLAS) plus the squared
norms gives approximate squared distances; :func:`scan_tile` keeps, per row, the ``L`` smallest of them in
a max-heap. :func:`rerank` then computes the candidates' distances exactly in float64, keeps
the k nearest and reports whether the rounding-error bound proves that no row outside the
candidates can be nearer. Called only from ``fairops.fairlof._blocked_search``,
``fairops.fairlof._approximate_search`` and ``fairops.fairlof._nndescent_search``, which make dtypes,
shapes and contiguity right first.
"""

import numpy as np

cimport numpy as cnp
from libc.math cimport sqrt, INFINITY

cnp.import_array()

ctypedef fused real:
    float
    double

# Columns are tested against the row's bound in chunks of this many; only a chunk holding a
# value below the bound is walked element by element (the test itself vectorises).
cdef enum:
    CHUNK = 32
    # query rows per call of the panel kernel: their products (PANEL_ROWS x tile floats) stay in L1
    PANEL_ROWS = 8

cdef extern from "_panel.h":
    enum: PANEL_LANES
    int fairops_panel_available() noexcept nogil
    void fairops_panel_products(const float* rows, Py_ssize_t n_rows, const float* packed, Py_ssize_t n_cols,
                                Py_ssize_t d, float* out, Py_ssize_t out_stride, const float* col_norms,
                                const float* row_norms, const float* row_bounds, const float* col_bounds,
                                unsigned char* hits) noexcept nogil


cdef inline void _heap_replace(real* values, int* indices, Py_ssize_t size, real value, int index) noexcept nogil:
    """Replace the root of a max-heap of ``size`` entries by (value, index) and sift it down."""
    cdef Py_ssize_t position = 0, child
    while True:
        child = 2 * position + 1
        if child >= size:
            break
        if child + 1 < size and values[child + 1] > values[child]:
            child += 1
        if values[child] <= value:
            break
        values[position] = values[child]
        indices[position] = indices[child]
        position = child
    values[position] = value
    indices[position] = index


cdef inline void _scan_row(const real* products, const real* col_norms, real row_norm, Py_ssize_t n_cols,
                           Py_ssize_t j0, Py_ssize_t skip, real* values, int* indices,
                           Py_ssize_t size) noexcept nogil:
    """Offer one row's approximate squared distances ``products[b] + col_norms[b] + row_norm`` to its heap."""
    cdef Py_ssize_t chunk, start, stop, b
    cdef real bound = values[0] - row_norm
    cdef int hit
    for chunk in range((n_cols + CHUNK - 1) // CHUNK):
        start = chunk * CHUNK
        stop = min(start + CHUNK, n_cols)
        hit = 0
        for b in range(start, stop):
            hit = hit | (products[b] + col_norms[b] < bound)
        if not hit:
            continue
        for b in range(start, stop):
            if products[b] + col_norms[b] < bound and b != skip:
                _heap_replace(values, indices, size, products[b] + col_norms[b] + row_norm, <int>(j0 + b))
                bound = values[0] - row_norm


cdef inline void _column_bounds(const real* col_norms, Py_ssize_t j0, Py_ssize_t n_cols, real[:, ::1] values,
                                real* bounds) noexcept nogil:
    """Column b's bound less its own norm: a row a is offered when products[a, b] + row norm < bound."""
    cdef Py_ssize_t b
    for b in range(n_cols):
        bounds[b] = values[j0 + b, 0] - col_norms[b]


cdef inline void _scan_columns(const real* products, Py_ssize_t stride, Py_ssize_t n_rows, Py_ssize_t n_cols,
                               Py_ssize_t i0, Py_ssize_t j0, const real* row_norms, const real* col_norms,
                               real* bounds, real[:, ::1] values, int[:, ::1] indices) noexcept nogil:
    """Offer rows ``i0 + a`` to the heaps of columns ``j0 + b`` (the transposed side of a tile)."""
    cdef Py_ssize_t a, b, chunk, start, stop, j, size = values.shape[1]
    cdef real row_norm, value
    cdef int hit
    for a in range(n_rows):
        row_norm = row_norms[a]
        for chunk in range((n_cols + CHUNK - 1) // CHUNK):
            start = chunk * CHUNK
            stop = min(start + CHUNK, n_cols)
            hit = 0
            for b in range(start, stop):
                hit = hit | (products[a * stride + b] + row_norm < bounds[b])
            if not hit:
                continue
            for b in range(start, stop):
                value = products[a * stride + b] + row_norm
                if value < bounds[b]:
                    j = j0 + b
                    _heap_replace(&values[j, 0], &indices[j, 0], size, value + col_norms[b], <int>(i0 + a))
                    bounds[b] = values[j, 0] - col_norms[b]


def scan_tile(
    const real[:, ::1] products,
    Py_ssize_t i0,
    Py_ssize_t j0,
    const real[::1] row_norms,
    const real[::1] col_norms,
    real[:, ::1] values,
    int[:, ::1] indices,
    const cnp.intp_t[::1] own,
    bint transpose_too,
):
    """Offer the tile ``products[a, b] = -2 <q_{i0+a}, x_{j0+b}>`` to the heaps.

    Row ``i0 + a`` of ``values``/``indices`` (a max-heap of its smallest approximate squared
    distances and their column ids) receives column ``j0 + b``; with ``transpose_too`` row
    ``j0 + b`` also receives ``i0 + a`` (the symmetric search of the fitted rows against
    themselves, where each pair of tiles is computed once; never with a tile that pairs rows with
    themselves). ``own[i]``: the column that is row i itself, never offered (-1: none).
    ``row_norms`` / ``col_norms`` / ``own`` hold all rows / columns, indexed from ``i0`` / ``j0``.
    """
    cdef Py_ssize_t n_rows = products.shape[0], n_cols = products.shape[1], size = values.shape[1]
    cdef Py_ssize_t a, b, chunk, start, stop, j
    cdef Py_ssize_t skip
    cdef real row_norm, value
    cdef int hit
    if real is float:
        bounds_array = np.empty(n_cols, dtype=np.float32)
    else:
        bounds_array = np.empty(n_cols, dtype=np.float64)
    cdef real[::1] bounds = bounds_array
    with nogil:
        for a in range(n_rows):
            skip = own[i0 + a] - j0
            _scan_row(&products[a, 0], &col_norms[j0], row_norms[i0 + a], n_cols, j0,
                      skip if 0 <= skip < n_cols else -1, &values[i0 + a, 0], &indices[i0 + a, 0], size)
        if transpose_too:
            _column_bounds(&col_norms[j0], j0, n_cols, values, &bounds[0])
            _scan_columns(&products[0, 0], n_cols, n_rows, n_cols, i0, j0, &row_norms[i0], &col_norms[j0],
                          &bounds[0], values, indices)


#: Whether this CPU runs :func:`scan_tile_float32`'s vector kernel (AVX-512 on x86-64 with GCC);
#: without it the blocked search keeps to BLAS and :func:`scan_tile`.
PANEL_AVAILABLE = bool(fairops_panel_available())
#: Rows per group of the packed layout :func:`scan_tile_float32` reads.
PANEL_WIDTH = PANEL_LANES


def scan_tile_float32(
    const float[:, ::1] scaled_rows,
    const float[:, :, ::1] packed,
    Py_ssize_t i0,
    Py_ssize_t i1,
    Py_ssize_t j0,
    Py_ssize_t j1,
    const float[::1] row_norms,
    const float[::1] col_norms,
    float[:, ::1] values,
    int[:, ::1] indices,
    const cnp.intp_t[::1] own,
    bint transpose_too,
):
    """:func:`scan_tile` of rows ``i0:i1`` against columns ``j0:j1`` without BLAS (float32 only).

    ``scaled_rows``: the query rows times -2. ``packed``: the fitted rows in groups of 16,
    ``packed[g, f, lane] = x[16 g + lane, f]``, and ``col_norms`` their squared norms, both
    readable to ``j1`` rounded up to a multiple of 16 (padded with zeros / +inf); ``j0`` is a
    multiple of 16. Only where ``PANEL_AVAILABLE``. ``_panel.h`` makes the products
    ``PANEL_ROWS`` rows at a time and flags each vector of 16 that may enter a heap; only flagged
    vectors are scanned here, exactly as :func:`scan_tile` scans.
    """
    cdef Py_ssize_t d = scaled_rows.shape[1], size = values.shape[1]
    cdef Py_ssize_t n_cols = j1 - j0, stride = (n_cols + PANEL_LANES - 1) // PANEL_LANES * PANEL_LANES
    cdef Py_ssize_t n_chunks = stride // PANEL_LANES
    cdef Py_ssize_t a0, a, b, c, g, n_rows, row, skip, width
    if i1 <= i0 or n_cols <= 0:
        return
    if not PANEL_AVAILABLE:
        raise RuntimeError("this CPU cannot run the vector kernel: use scan_tile")
    if (j0 % PANEL_LANES or packed.shape[0] * PANEL_LANES < j0 + stride or packed.shape[1] != d
            or packed.shape[2] != PANEL_LANES or col_norms.shape[0] < j0 + stride):
        raise ValueError(f"packed / col_norms do not cover columns {j0}:{j0 + stride} in groups of 16")
    panel_array = np.empty(PANEL_ROWS * stride, dtype=np.float32)
    hits_array = np.zeros((PANEL_ROWS + 3) // 4 * n_chunks, dtype=np.uint8)
    row_bounds_array = np.empty(PANEL_ROWS, dtype=np.float32)
    bounds_array = np.full(stride, -INFINITY, dtype=np.float32)
    cdef float[::1] panel = panel_array
    cdef unsigned char[::1] hits = hits_array
    cdef float[::1] row_bounds = row_bounds_array
    cdef float[::1] bounds = bounds_array
    with nogil:
        if transpose_too:
            _column_bounds(&col_norms[j0], j0, n_cols, values, &bounds[0])
        a0 = i0
        while a0 < i1:
            n_rows = min(<Py_ssize_t>PANEL_ROWS, i1 - a0)
            for a in range(n_rows):
                row_bounds[a] = values[a0 + a, 0] - row_norms[a0 + a]
            fairops_panel_products(&scaled_rows[a0, 0], n_rows, &packed[j0 // PANEL_LANES, 0, 0], n_cols, d,
                                   &panel[0], stride, &col_norms[j0], &row_norms[a0], &row_bounds[0],
                                   &bounds[0] if transpose_too else NULL, &hits[0])
            for g in range((n_rows + 3) // 4):
                for c in range(n_chunks):
                    if not hits[g * n_chunks + c]:
                        continue
                    # the flagged 16 columns of these four rows, scanned as scan_tile scans a whole tile
                    b = c * PANEL_LANES
                    width = min(<Py_ssize_t>PANEL_LANES, n_cols - b)
                    for a in range(4 * g, min(4 * g + 4, n_rows)):
                        row = a0 + a
                        skip = own[row] - j0 - b
                        _scan_row(&panel[a * stride + b], &col_norms[j0 + b], row_norms[row], width, j0 + b,
                                  skip if 0 <= skip < width else -1, &values[row, 0], &indices[row, 0], size)
                        if transpose_too:
                            _scan_columns(&panel[a * stride + b], stride, 1, width, row, j0 + b, &row_norms[row],
                                          &col_norms[j0 + b], &bounds[b], values, indices)
            a0 += n_rows


def rerank(
    const double[:, ::1] queries,
    const double[:, ::1] fitted,
    const int[:, ::1] candidates,
    const double[::1] cutoffs,
    const double[::1] errors,
    Py_ssize_t k,
):
    """Exact k nearest among each query's candidates, and whether they are provably the k nearest.

    Row i's candidates are ``candidates[i]`` (-1 = empty slot); every other fitted row has an
    approximate squared distance of at least ``cutoffs[i]`` and an error of at most ``errors[i]``.
    The candidates' squared distances are summed in float64 over the features in order, sorted by
    (distance, index), and the k first kept. The row is proven when ``cutoffs[i] - errors[i]`` is
    at least the k-th squared distance: no other row can then be strictly nearer, so the k
    distances are the exact k smallest (a row outside at exactly that distance is a tie).

    Returns distances (n, k) float64, indices (n, k) intp and proven (n,) bool.
    """
    cdef Py_ssize_t n = queries.shape[0], d = queries.shape[1], width = candidates.shape[1]
    cdef Py_ssize_t i, c, f, m, p, filled
    cdef double total, diff, key
    cdef cnp.intp_t index
    distances_array = np.full((n, k), INFINITY, dtype=np.float64)
    indices_array = np.full((n, k), -1, dtype=np.intp)
    proven_array = np.zeros(n, dtype=np.uint8)
    scratch_d = np.empty(width, dtype=np.float64)
    scratch_i = np.empty(width, dtype=np.intp)
    cdef double[:, ::1] out_d = distances_array
    cdef cnp.intp_t[:, ::1] out_i = indices_array
    cdef unsigned char[::1] proven = proven_array
    cdef double[::1] sd = scratch_d
    cdef cnp.intp_t[::1] si = scratch_i
    with nogil:
        for i in range(n):
            filled = 0
            for c in range(width):
                if candidates[i, c] < 0:
                    continue
                index = candidates[i, c]
                total = 0.0
                for f in range(d):
                    diff = queries[i, f] - fitted[index, f]
                    total = total + diff * diff
                # insertion sort by (squared distance, index)
                p = filled
                while p > 0 and (sd[p - 1] > total or (sd[p - 1] == total and si[p - 1] > index)):
                    sd[p] = sd[p - 1]
                    si[p] = si[p - 1]
                    p -= 1
                sd[p] = total
                si[p] = index
                filled += 1
            m = min(k, filled)
            for c in range(m):
                out_d[i, c] = sqrt(sd[c])
                out_i[i, c] = si[c]
            proven[i] = filled >= k and cutoffs[i] - errors[i] >= sd[k - 1]
    return distances_array, indices_array, proven_array.astype(bool)

