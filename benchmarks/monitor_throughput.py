"""Monitoring throughput and memory: ``fairops monitor``'s chunked windows against one ``mlflow.models.evaluate``.

    python benchmarks/monitor_throughput.py                      # 10 million rows, windows of 100,000
    python benchmarks/monitor_throughput.py --rows 1000000 --window 50000

Writes a CSV of labelled rows (examples/promote_and_monitor.py's synthetic credit rows: three features,
sex, label), registers that example's logistic regression in a fresh SQLite store, then runs each contender
in a process of its own and reports wall time, rows per second and the process's peak resident memory
(``ru_maxrss``; the memory after imports is shown beside it):

- ``monitor``: :func:`fairops.registry._monitoring.monitor` over ``fairops monitor``'s file reader (chunks of
  200,000 rows, one window held at a time): the champion's scores, accuracy and fairness with intervals at
  the registered threshold per window, one ``log_batch`` of step metrics per window;
- ``evaluate`` (the anchor): ``pd.read_csv`` of the whole file, then one ``mlflow.models.evaluate(...,
  evaluators="fairops")`` over all rows (the fairops evaluator: threshold at 50% TPR on these rows, ratios,
  intervals, the group-rate table and a ROC picture per group).

They do not compute the same numbers (one per window vs one for all rows); what is compared is the cost of
getting fairness figures for every row of a file.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "promote_and_monitor.py"
NAME = "throughput"


def _example():
    spec = importlib.util.spec_from_file_location("promote_and_monitor", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write_rows(path: Path, rows: int, chunk: int = 1_000_000) -> None:
    example = _example()
    for start in range(0, rows, chunk):
        part = example.make_rows(start // chunk, min(chunk, rows - start))
        part.to_csv(path, mode="a" if start else "w", header=not start, index=False)


def contender(kind: str, folder: Path, window: int) -> dict:
    import mlflow
    import pandas as pd

    from fairops.jobs._monitor import file_windows
    from fairops.registry._monitoring import monitor

    uri, path = f"sqlite:///{folder / 'mlflow.db'}", folder / "rows.csv"
    after_imports = _peak_mb()
    start = time.perf_counter()
    if kind == "monitor":
        with open(os.devnull, "w") as quiet:
            result = monitor(NAME, file_windows(path, window, "y", ["sex"]), tracking_uri=uri, out=quiet)
        rows = sum(w.rows for w in result.windows)
    else:
        frame = pd.read_csv(path)
        rows = len(frame)
        mlflow.set_tracking_uri(uri)
        with mlflow.start_run():
            mlflow.models.evaluate(f"models:/{NAME}/1", frame, targets="y", model_type="classifier",
                                   evaluators="fairops",
                                   evaluator_config={"sensitive_features": ["sex"], "target": {"tpr": 0.5}})
    seconds = time.perf_counter() - start
    return {"contender": kind, "rows": rows, "seconds": seconds, "rows_per_second": rows / seconds,
            "peak_mb": _peak_mb(), "after_imports_mb": after_imports}


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--window", type=int, default=100_000)
    parser.add_argument("--folder", help="where to write the rows and the store (default: a temporary folder)")
    parser.add_argument("--contender", choices=["monitor", "evaluate"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    folder = Path(args.folder or tempfile.mkdtemp(prefix="monitor-throughput-"))
    if args.contender:  # a child process: one contender, its figures as JSON on stdout
        print(json.dumps(contender(args.contender, folder, args.window)))
        return []
    folder.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    write_rows(folder / "rows.csv", args.rows)
    print(f"{args.rows:,} rows written in {time.perf_counter() - start:.0f} s "
          f"({(folder / 'rows.csv').stat().st_size / 1e6:.0f} MB)")
    _example().register_version(f"sqlite:///{folder / 'mlflow.db'}", NAME)
    results = []
    for kind in ("monitor", "evaluate"):
        command = [sys.executable, __file__, "--contender", kind, "--folder", str(folder), "--window", str(args.window)]
        answer = subprocess.run(command, capture_output=True, text=True)
        if answer.returncode:
            print(f"{kind}: failed (exit {answer.returncode}): {answer.stderr.strip().splitlines()[-1:]}")
            continue
        results.append(json.loads(answer.stdout.strip().splitlines()[-1]))
    print(f"{'contender':<10}{'rows':>12}{'seconds':>10}{'rows/s':>12}{'peak MB':>10}{'after imports MB':>18}")
    for r in results:
        print(f"{r['contender']:<10}{r['rows']:>12,}{r['seconds']:>10.1f}{r['rows_per_second']:>12,.0f}"
              f"{r['peak_mb']:>10.0f}{r['after_imports_mb']:>18.0f}")
    if len(results) == 2:
        monitor_, anchor = results
        print(f"monitor / evaluate: {monitor_['rows_per_second'] / anchor['rows_per_second']:.2f}x the rows/s, "
              f"{monitor_['peak_mb'] / anchor['peak_mb']:.2f}x the peak memory")
    return results


if __name__ == "__main__":
    main()
