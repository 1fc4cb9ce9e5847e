"""Table cells the benchmark reports share. Imported by the scripts beside it (``python benchmarks/x.py``
puts this folder on the import path)."""

from __future__ import annotations

import statistics


def mean_sd_percent(values) -> str:
    """Shares (0..1) as ``mean ± sd`` in %, one decimal; the sd of a single value is 0.

    >>> mean_sd_percent([0.5, 0.7]), mean_sd_percent([0.25])
    ('60.0 ± 14.1', '25.0 ± 0.0')
    """
    values = [100 * v for v in values]
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):.1f} ± {sd:.1f}"
