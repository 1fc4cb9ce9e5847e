"""Batch scoring throughput: logged fairops models on a local Spark session (mlflow.pyfunc.spark_udf) against
the same model's in-process pyfunc ``predict`` on the same rows, in the same run.

Rows: the bundled Adult rows resampled (with replacement) to ``--rows``, written once as Parquet. Models:
the champion of a small ``fairops tune`` on Adult (logistic regression and LightGBM; the pick is what it
is, named in the table), a SCAFF forest (100 trees, depth 6, the six numeric columns) and a FairLOF
detector in novelty mode (k = 10, numeric columns standardised, sex and race sensitive, fitted on 10,000
rows) -- each logged with its fairops flavor. Spark reads the Parquet, scores with the udf and writes to
Spark's ``noop`` sink (the whole plan runs, nothing is stored); in-process ``predict`` gets the pandas
frame already in memory (the anchor: x 1.00). Before timing, both sides score the first 2,000 rows and
must agree exactly. Best of ``--repeats``; CPU time is this process only (Spark's JVM and Python workers
are other processes), so only wall time is compared.

    .venv/bin/python benchmarks/spark_scoring.py                  # 1,000,000 rows, local[2], all three models
    .venv/bin/python benchmarks/spark_scoring.py --quick          # 2,000 rows, SCAFF and FairLOF (CI smoke test)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import mlflow
import numpy as np
import pandas as pd
from mlflow.tracking import MlflowClient

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from spark_batch_scoring import score, scores_params, spark_session  # noqa: E402

from fairops.datasets import load_adult  # noqa: E402
from fairops.fairlof import FairLOF  # noqa: E402
from fairops.fairlof._features import FeatureEncoder  # noqa: E402
from fairops.mlflow import (
    fairlof as fairlof_flavor,  # noqa: E402
    scaff as scaff_flavor,  # noqa: E402
)
from fairops.scaff import SCAFFClassifier  # noqa: E402

NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]


def adult_rows() -> tuple[pd.DataFrame, np.ndarray]:
    data = load_adult(positive=">50K")
    rows = data.X.astype({c: str for c in data.X.columns if isinstance(data.X[c].dtype, pd.CategoricalDtype)})
    return rows, data.y


def log_models(folder: Path, uri: str, with_champion: bool, fit_rows: int, trees: int) -> dict[str, str]:
    """Model name -> model URI, every model logged in ``uri`` with fairops' flavors (fitted on ``fit_rows``)."""
    rows, y = adult_rows()
    train = rows.iloc[:fit_rows]
    uris = {}
    if with_champion:
        from fairops.cli import main

        project = folder / "project"
        code = main(["tune", "--dataset", "adult", "--max-train-rows", "3000", "--families",
                     "logistic_regression,lightgbm", "--no-progress", "--project-dir", str(project)])
        assert code == 0, "fairops tune failed"
        champion = "models:/fairops-adult@champion"
        source = f"sqlite:///{project / 'mlflow.db'}"
        mlflow.set_tracking_uri(source)
        uris[f"fairops tune champion ({model_kind(champion)})"] = (champion, source)
    mlflow.set_tracking_uri(uri)
    forest = SCAFFClassifier(n_estimators=trees, max_depth=6, theta=0.5, random_state=0, n_jobs=1).fit(
        train[NUMERIC], y[:fit_rows], sensitive_features=train["sex"])
    encoder = FeatureEncoder(categorical="drop", sensitive=["sex", "race"]).fit(train)
    detector = FairLOF(n_neighbors=10, correction_strength=0.5, novelty=True, n_jobs=1).fit(
        encoder.transform(train).to_numpy(), sensitive_features=encoder.sensitive_frame(train))
    experiment = MlflowClient(uri).create_experiment("spark-scoring", str(folder / "artifacts"))
    with mlflow.start_run(experiment_id=experiment):
        uris["SCAFF forest"] = (scaff_flavor.log_model(forest, name="scaff", threshold=0.4,
                                                       input_example=train[NUMERIC].head(3)).model_uri, uri)
        uris["FairLOF detector"] = (fairlof_flavor.log_model(detector, name="lof", preprocessing=encoder,
                                                             input_example=train.head(3)).model_uri, uri)
    return uris


def model_kind(model_uri: str) -> str:
    """The estimator class at the end of the model (the last step of a pipeline)."""
    last = mlflow.pyfunc.load_model(model_uri).get_raw_model()
    while hasattr(last, "steps"):  # pipelines may nest
        last = last.steps[-1][1]
    return type(last).__name__


def in_process(model_uri: str, frame: pd.DataFrame):
    model = mlflow.pyfunc.load_model(model_uri)
    columns = model.metadata.get_input_schema().input_names()
    return model.predict(frame[columns], params=scores_params(model_uri))


def best_wall(call, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--quick", action="store_true",
                        help="2,000 rows, no tuning run, one repeat, models fitted on 2,000 rows (10 trees)")
    args = parser.parse_args(argv)
    fit_rows, trees = 10_000, 100
    if args.quick:
        args.rows, args.repeats, fit_rows, trees = 2_000, 1, 2_000, 10

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        models = log_models(folder, f"sqlite:///{folder / 'mlflow.db'}", with_champion=not args.quick,
                            fit_rows=fit_rows, trees=trees)
        rows, _ = adult_rows()
        frame = rows.sample(args.rows, replace=True, random_state=0).reset_index(drop=True)
        frame.to_parquet(folder / "rows.parquet", row_group_size=100_000)
        spark = spark_session(args.master)
        spark.sparkContext.setLogLevel("ERROR")
        table = spark.read.parquet(str(folder / "rows.parquet"))
        print(f"{args.rows:,} Adult rows, Spark {spark.version} {args.master}, "
              f"{os.cpu_count()} cores, best of {args.repeats}")
        results = []
        for name, (model_uri, tracking_uri) in models.items():
            mlflow.set_tracking_uri(tracking_uri)
            head = frame.iloc[:2000]
            local = pd.DataFrame(in_process(model_uri, head))
            spark_head = score(spark, spark.createDataFrame(head.assign(row_id=np.arange(len(head)))), model_uri)
            spark_head = spark_head.toPandas().sort_values("row_id")
            # score() names the answer's columns as the model's signature does, like predict's frame
            difference = max(float(np.max(np.abs(spark_head[column].to_numpy(dtype=float)
                                                 - local[column].to_numpy(dtype=float))))
                             for column in local.columns)
            print(f"agree: {name}, Spark vs in-process on 2,000 rows, max |difference| = {difference:g} <= 0")
            if difference > 0:
                raise SystemExit(f"{name}: Spark and in-process scores differ")
            local_s = best_wall(lambda: in_process(model_uri, frame), args.repeats)
            spark_s = best_wall(lambda: score(spark, table, model_uri).write.format("noop").mode("overwrite").save(),
                                args.repeats)
            results.append((name, local_s, spark_s))
        spark.stop()

    print("\n| model | in-process predict s | rows/s | Spark spark_udf s | rows/s | x in-process rows/s |")
    print("|---|---|---|---|---|---|")
    for name, local_s, spark_s in results:
        print(f"| {name} | {local_s:.2f} | {args.rows / local_s:,.0f} | {spark_s:.2f} | {args.rows / spark_s:,.0f} "
              f"| {local_s / spark_s:.2f} |")


if __name__ == "__main__":
    main()
