"""``fairops tune`` on data no one here tuned for, as a user would run it on a file of their own.

Reads the data sets from the folder given on the command line (the repository never reads a shared folder
by itself), writes each as the CSV or Parquet file a user would hand over, and runs ``fairops tune --data``
on it with the defaults (FB-auto, one Fairband iteration of 206 fits, every family, the robust pick), in a
fresh project folder per data set:

- ``law``: the LSAC law school file (20,798 rows), target ``pass_bar``, sensitive ``race,male``;
- ``law_missing``: the same with 10% of ``lsat`` made missing (rows drawn at random, seed 0);
- ``credit``: the default of credit card clients file (30,000 rows, its ``ID`` column kept, as a user would
  have it), target ``default.payment.next.month``, sensitive ``SEX``;
- ``acs``: the ACS sample's three files in one Parquet file with a ``test`` column marking the sample's own
  test rows (``--holdout test``), target ``PINCP``, sensitive ``SEX,RAC1P``.

Per data set it reports the pick and the most accurate fit (validation and test, as the tune summary prints
them), the failed fits by cause (read from the study: constant validation scores, or the error's last line),
the summary's lines on missing values, the wall time, and what the registered champion, loaded as it is
served, answers rows of the file that miss a value (how many get a decision). Results go to ``--out`` as
JSON, the Markdown table to stdout.

    nice python benchmarks/real_data.py /path/to/datasets --out real_data.json
    nice python benchmarks/real_data.py /path/to/datasets --datasets acs --max-train-rows 20000
    python benchmarks/real_data.py /path/to/datasets --quick     # smoke: 600 rows of law_missing, two families
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

DATASETS = ("law", "law_missing", "credit", "acs")
QUICK_FAMILIES = "lightgbm,logistic_regression"


def write_file(name: str, source: Path, work: Path, rows: int | None = None) -> tuple[Path, list[str]]:
    """The data set as a user's file in ``work`` and the ``fairops tune`` options naming its columns."""
    if name in ("law", "law_missing"):
        frame = pd.read_csv(source / "law_school_clean.csv.gz")
        frame = frame if rows is None else frame.sample(rows, random_state=0).reset_index(drop=True)
        if name == "law_missing":
            frame.loc[np.random.default_rng(0).random(len(frame)) < 0.1, "lsat"] = np.nan
        path = work / f"{name}.csv"
        frame.to_csv(path, index=False)
        return path, ["--target", "pass_bar", "--sensitive", "race,male"]
    if name == "credit":
        frame = pd.read_csv(source / "default_credit_card_clients.csv.gz")
        frame = frame if rows is None else frame.sample(rows, random_state=0)
        path = work / "credit.csv"
        frame.to_csv(path, index=False)
        return path, ["--target", "default.payment.next.month", "--sensitive", "SEX"]
    if name == "acs":
        parts = [pd.read_parquet(source / f"ACS_sample.{part}.parquet").assign(test=int(part == "test"))
                 for part in ("train", "validation", "test")]
        frame = pd.concat(parts, ignore_index=True)
        frame = frame if rows is None else frame.sample(rows, random_state=0).reset_index(drop=True)
        path = work / "acs.parquet"
        frame.to_parquet(path, index=False)
        return path, ["--target", "PINCP", "--sensitive", "SEX,RAC1P", "--holdout", "test"]
    raise SystemExit(f"unknown data set {name!r}; choose from {DATASETS}")


def failures_by_cause(project: Path) -> dict:
    """Failed fits of the project's study by cause: a reason fairops records, or the error's last line."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage = f"sqlite:///{project}/optuna.db"
    causes: collections.Counter = collections.Counter()
    for summary in optuna.get_all_study_summaries(storage):
        study = optuna.load_study(study_name=summary.study_name, storage=storage)
        for trial in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.FAIL,)):
            reason = trial.user_attrs.get("failure") or str(trial.system_attrs.get("fail_reason", "error"))
            causes[reason.strip().splitlines()[-1][:160] if reason else "error"] += 1
    return dict(causes)


def served_missing(project: Path, path: Path, options: list[str], limit: int = 500) -> dict:
    """Rows of the file missing a feature value, answered by the champion as served: how many, how many decided."""
    import mlflow

    frame = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    drop = [options[options.index(flag) + 1] for flag in ("--target", "--holdout") if flag in options]
    features = frame.drop(columns=drop)
    holes = features[features.isna().any(axis=1)].head(limit)
    if holes.empty:
        return {"rows": 0, "decided": 0}
    mlflow.set_tracking_uri(f"sqlite:///{project}/mlflow.db")
    try:
        name = f"fairops-{path.stem}"
        model = mlflow.pyfunc.load_model(f"models:/{name}@champion")
    finally:
        mlflow.set_tracking_uri(None)
    answer = model.predict(holes.astype(object).where(holes.notna(), None), params={"answer": "scores"})
    decided = int(answer["decision"].isin([0, 1]).sum())
    return {"rows": len(holes), "decided": decided}


def _figures(text: str) -> dict:
    """The summary's rows: label -> validation and test (accuracy, fairness) as printed."""
    rows = {}
    for line in text.splitlines():
        match = re.match(r"^((?:Fairband pick|most accurate) \(#\d+, [\w_]+\))\s+(.*)$", line)
        if match:
            values = re.findall(r"(\d\.\d{4})(?: \[(\d\.\d{4}), (\d\.\d{4})\])?", match[2])
            rows[match[1]] = [float(v[0]) for v in values]
    return rows


def run_one(name: str, source: Path, work: Path, *, iterations: int, max_train_rows: int | None, rows: int | None,
            families: str | None, seed: int) -> dict:
    path, options = write_file(name, source, work, rows)
    project = work / f"project-{name}"
    command = [sys.executable, "-m", "fairops.cli", "tune", "--data", str(path), *options,
               "--iterations", str(iterations), "--seed", str(seed), "--project-dir", str(project), "--no-progress"]
    if max_train_rows:
        command += ["--max-train-rows", str(max_train_rows)]
    if families:
        command += ["--families", families]
    start = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.monotonic() - start
    (work / f"{name}.out").write_text(done.stdout + "\n--- stderr ---\n" + done.stderr)
    missing = [line.strip() for line in done.stdout.splitlines() if re.match(r"^  \S+: [\d,]+ of [\d,]+ rows", line)]
    return {"dataset": name, "command": " ".join(command[1:]), "exit": done.returncode, "seconds": round(seconds),
            "rows": _figures(done.stdout), "failures": failures_by_cause(project) if project.exists() else {},
            "missing": missing, "stderr_lines": len(done.stderr.splitlines()),
            "served_missing": served_missing(project, path, options) if done.returncode == 0 else None,
            "summary": done.stdout[-4000:] if done.returncode else ""}


def table(results: list[dict]) -> str:
    lines = ["| data set | fit | validation accuracy | validation fairness | test accuracy | test fairness | "
             "failed fits by cause | exit | time |", "|---|---|---|---|---|---|---|---|---|"]
    for result in results:
        failures = "; ".join(f"{count} {cause}" for cause, count in sorted(result["failures"].items())) or "none"
        for number, (label, values) in enumerate(result["rows"].items() or [("(no summary)", [])]):
            first = number == 0
            lines.append(f"| {result['dataset'] if first else ''} | {label} | {' | '.join(_cells(values))} | "
                         f"{failures if first else ''} | {result['exit'] if first else ''} | "
                         f"{_duration(result['seconds']) if first else ''} |")
    return "\n".join(lines)


def _cells(values: list) -> list[str]:
    """Validation accuracy and fairness, test accuracy and fairness, from a summary row's printed numbers."""
    return [f"{v:.4f}" for v in values[:4]] + ["-"] * (4 - len(values[:4]))


def _duration(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds), 60)
    return f"{minutes} min {seconds:02d} s" if minutes else f"{seconds} s"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="the folder holding the data sets' files")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--iterations", type=int, default=1)
    parser.add_argument("--max-train-rows", type=int, help="passed to fairops tune (default: all rows)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work-dir", type=Path, help="where the files and projects go (default: a fresh folder)")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    parser.add_argument("--quick", action="store_true", help="600 rows of law_missing, two families")
    args = parser.parse_args(argv)
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="fairops-real-data-"))
    work.mkdir(parents=True, exist_ok=True)
    names = ["law_missing"] if args.quick else args.datasets
    results = []
    for name in names:
        result = run_one(name, args.folder, work, iterations=args.iterations, max_train_rows=args.max_train_rows,
                         rows=600 if args.quick else None, families=QUICK_FAMILIES if args.quick else None,
                         seed=args.seed)
        results.append(result)
        print(f"{name}: exit {result['exit']} in {_duration(result['seconds'])} ({work / (name + '.out')})",
              flush=True)
        if args.out:
            args.out.write_text(json.dumps(results, indent=1))
    print(table(results))
    for result in results:
        served = result.get("served_missing") or {}
        if served.get("rows"):
            print(f"{result['dataset']}: the served champion decided {served['decided']} of {served['rows']} rows of "
                  "the file that miss a value")
    return 0 if all(result["exit"] == 0 for result in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
