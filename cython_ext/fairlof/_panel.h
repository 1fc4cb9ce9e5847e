/* Inner products of a few query rows with a tile of fitted rows, in float32, for _knn.pyx.
 *
 * The fitted rows come packed in groups of 16: group g holds rows 16g..16g+15 feature by feature,
 * packed[g][f][lane] = x[16g + lane][f], so the 16 values of one feature are one vector and a
 * group's features follow each other in memory. Four query rows share each vector load. Each
 * vector of products is also tested against the heaps' bounds here, so the scan in _knn.pyx reads
 * back only the vectors that may hold a candidate: with few features BLAS spends most of its
 * time writing its output, and a separate scan most of the rest reading it.
 *
 * The vectors are GCC's vector extension (plain C). They are fast only where the compiler may use
 * 512-bit registers, so on x86-64 Linux with GCC the kernel is compiled for x86-64-v4 (AVX-512)
 * and fairops_panel_available() says at run time whether this CPU can run it; elsewhere it says 0
 * and _knn.pyx's callers keep to BLAS. The sum order differs from BLAS's, which the search's
 * rounding-error bound allows for (it holds for any order of the d terms).
 */
#ifndef FAIROPS_PANEL_H
#define FAIROPS_PANEL_H

#include <stddef.h>
#include <string.h>

#define PANEL_LANES 16

typedef float fairops_v16 __attribute__((vector_size(64)));
typedef int fairops_m16 __attribute__((vector_size(64)));

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && __GNUC__ >= 12
#define FAIROPS_PANEL_TARGET __attribute__((target("arch=x86-64-v4")))
static int fairops_panel_available(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("x86-64-v4") != 0;
}
#else
#define FAIROPS_PANEL_TARGET
static int fairops_panel_available(void) { return 0; }
#endif

#if defined(__clang__)
#define FAIROPS_SHUFFLE(m, ...) __builtin_shufflevector((m), (m), __VA_ARGS__)
#else
#define FAIROPS_SHUFFLE(m, ...) __builtin_shuffle((m), (fairops_m16){__VA_ARGS__})
#endif

/* Macros rather than functions, so that they compile inside the kernel for its target. */
#define FAIROPS_LOAD16(dst, p) memcpy(&(dst), (p), sizeof(fairops_v16))
#define FAIROPS_STORE16(p, src) memcpy((p), &(src), sizeof(fairops_v16))
/* whether any lane of a comparison mask is set: an OR across lanes by halving */
#define FAIROPS_ANY(m)                                                                     \
    ((m) |= FAIROPS_SHUFFLE((m), 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7),     \
     (m) |= FAIROPS_SHUFFLE((m), 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11),     \
     (m) |= FAIROPS_SHUFFLE((m), 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13),     \
     (m) |= FAIROPS_SHUFFLE((m), 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14),     \
     (m)[0] != 0)

/* Products of query rows a < n_rows (row-major, d features) with the packed columns b < n_cols
 * into out (row stride out_stride, a multiple of 16), and hits[(a / 4) * (out_stride / 16) + b / 16]
 * = whether any of those four rows' products with those 16 columns may enter a heap:
 * s + col_norms[b] < row_bounds[a] (row a's heap bound less its own norm) or, with col_bounds
 * (NULL: rows only), s + row_norms[a] < col_bounds[b]. col_norms and col_bounds are readable to
 * n_cols rounded up to 16 (padded with +inf / -inf). Bounds only shrink while a panel is scanned,
 * so a test against the bounds at its start never misses a value; the caller tests each flagged
 * value again against the current bound. */
FAIROPS_PANEL_TARGET
static void fairops_panel_products(const float *rows, ptrdiff_t n_rows, const float *packed, ptrdiff_t n_cols,
                                   ptrdiff_t d, float *out, ptrdiff_t out_stride, const float *col_norms,
                                   const float *row_norms, const float *row_bounds, const float *col_bounds,
                                   unsigned char *hits) {
    ptrdiff_t n_chunks = out_stride / PANEL_LANES;
    for (ptrdiff_t c = 0; c < n_cols; c += PANEL_LANES) {
        const float *group = packed + c * d;
        fairops_v16 col_norm, col_bound = {0};
        FAIROPS_LOAD16(col_norm, col_norms + c);
        if (col_bounds != NULL) FAIROPS_LOAD16(col_bound, col_bounds + c);
        for (ptrdiff_t a = 0; a < n_rows; a += 4) {
            /* a short last group repeats its last row, whose products are then stored twice */
            ptrdiff_t row[4];
            for (int r = 0; r < 4; r++) row[r] = a + r < n_rows ? a + r : n_rows - 1;
            const float *q0 = rows + row[0] * d, *q1 = rows + row[1] * d;
            const float *q2 = rows + row[2] * d, *q3 = rows + row[3] * d;
            fairops_v16 s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};
            for (ptrdiff_t f = 0; f < d; f++) {
                fairops_v16 x;
                FAIROPS_LOAD16(x, group + f * PANEL_LANES);
                s0 += q0[f] * x;
                s1 += q1[f] * x;
                s2 += q2[f] * x;
                s3 += q3[f] * x;
            }
            fairops_v16 sums[4] = {s0, s1, s2, s3};
            fairops_m16 hit = {0};
            for (int r = 0; r < 4; r++) {
                FAIROPS_STORE16(out + row[r] * out_stride + c, sums[r]);
                hit |= (sums[r] + col_norm) < row_bounds[row[r]];
                if (col_bounds != NULL) hit |= (sums[r] + row_norms[row[r]]) < col_bound;
            }
            hits[(a / 4) * n_chunks + c / PANEL_LANES] = (unsigned char)FAIROPS_ANY(hit);
        }
    }
}

#endif
