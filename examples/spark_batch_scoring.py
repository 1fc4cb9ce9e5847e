"""Score a table with a registered fairops model on Spark, through ``mlflow.pyfunc.spark_udf``.

Any model fairops logs scores this way: the champion of ``fairops tune`` (P(positive class) from raw
rows), a SCAFF forest (P(y = 1), plus labels when logged with a threshold) and a FairLOF detector
(``outlier_score`` and ``outlier`` from raw rows). The model's signature gives the input columns; a fairops
classifier answers class labels by default, so its scores are asked for (``model_config={"answer": "scores"}``)
and typed from ``metadata.fairops_scores_output`` in its ``MLmodel``; a model answering several columns gives
one struct column, spread here into top-level columns.

    fairops tune --dataset adult                       # registers models:/fairops-adult@champion
    python examples/spark_batch_scoring.py --output adult-scores.parquet
    python examples/spark_batch_scoring.py --model-uri models:/my-detector/3 --input rows.parquet \\
        --tracking-uri http://mlflow:5000 --output scores.parquet --master spark://head:7077

Without ``--input`` it scores the bundled Adult rows. Spark's Python workers run this interpreter
(``PYSPARK_PYTHON``), so they import the same fairops; on a cluster, install fairops on the workers
(the model's own ``requirements.txt`` names the wheel it carries) or pass ``--env-manager virtualenv``.
Needs ``pip install 'fairops[spark]'`` and Java 17 or newer.
"""

from __future__ import annotations

import argparse
import os
import sys

import mlflow


def spark_session(master: str = "local[*]"):
    """A Spark session whose Python workers run this interpreter (and so see the same packages)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    return (SparkSession.builder.master(master).appName("fairops-batch-scoring")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.execution.arrow.pyspark.enabled", "true")
            .getOrCreate())


def signature_of(model_uri: str):
    signature = mlflow.models.get_model_info(model_uri).signature
    if signature is None:
        raise ValueError(f"{model_uri} has no signature: log it with an input_example so its columns are known")
    return signature


def input_columns(model_uri: str) -> list[str]:
    """The columns the model reads, from its signature."""
    return signature_of(model_uri).inputs.input_names()


def score(spark, table, model_uri: str, *, env_manager: str = "local"):
    """``table`` (a Spark DataFrame) with the model's answer added as the columns its signature names
    (``probability``; ``outlier_score`` and ``outlier``; ...), e.g. ``score(spark,
    spark.read.parquet("rows.parquet"), "models:/fairops-adult@champion")``."""
    from pyspark.sql.types import StructType

    signature = signature_of(model_uri)
    columns = signature.inputs.input_names()
    missing = [name for name in columns if name not in table.columns]
    if missing:
        raise ValueError(f"the table lacks the model's input columns {missing}")
    scores = (mlflow.models.get_model_info(model_uri).metadata or {}).get("fairops_scores_output")
    if scores:  # a classifier answers labels by default: ask for its scores, typed as its metadata says
        outputs = [name for name, _ in scores]
        udf = mlflow.pyfunc.spark_udf(spark, model_uri, result_type=_spark_type(scores), env_manager=env_manager,
                                      model_config={"answer": "scores"})
    else:
        outputs = signature.outputs.input_names() if signature.outputs is not None else []
        udf = mlflow.pyfunc.spark_udf(spark, model_uri, env_manager=env_manager)
    answer = outputs[0] if len(outputs) == 1 and outputs[0] else "prediction"
    scored = table.withColumn(answer, udf(*[table[name] for name in columns]))
    if isinstance(scored.schema[answer].dataType, StructType):  # several output columns: one struct
        scored = scored.select("*", f"{answer}.*").drop(answer)
    return scored


def _spark_type(columns) -> str:
    """A Spark result type (DDL) for ``[name, MLflow type]`` columns: one type, or a struct of named ones."""
    spark_types = {"double": "double", "string": "string", "integer": "int", "long": "bigint", "boolean": "boolean"}
    if len(columns) == 1 and not columns[0][0]:
        return spark_types[columns[0][1]]
    return ", ".join(f"{name} {spark_types[kind]}" for name, kind in columns)


def read_table(spark, path: str | None):
    if path is None:
        from fairops.datasets import load_adult

        rows = load_adult().X
        rows = rows.astype({c: str for c in rows.columns if rows[c].dtype == "category"})
        return spark.createDataFrame(rows)
    if path.endswith(".csv"):
        return spark.read.csv(path, header=True, inferSchema=True)
    return spark.read.parquet(path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-uri", default="models:/fairops-adult@champion")
    parser.add_argument("--tracking-uri", default="sqlite:///fairops-project/mlflow.db",
                        help="where the model is registered (fairops tune's default store)")
    parser.add_argument("--input", help="a Parquet folder/file or a CSV file (default: the bundled Adult rows)")
    parser.add_argument("--output", help="write the scored table here as Parquet (default: show 5 rows)")
    parser.add_argument("--master", default="local[*]", help="Spark master URL")
    parser.add_argument("--env-manager", default="local", choices=["local", "virtualenv", "uv", "conda"])
    args = parser.parse_args(argv)

    mlflow.set_tracking_uri(args.tracking_uri)
    try:
        mlflow.models.get_model_info(args.model_uri)
    except Exception as error:  # noqa: BLE001 - any lookup failure gets the same advice
        raise SystemExit(f"cannot find {args.model_uri} in {args.tracking_uri} ({error}); "
                         "run `fairops tune --dataset adult` first, or pass --model-uri/--tracking-uri") from None
    spark = spark_session(args.master)
    try:
        scored = score(spark, read_table(spark, args.input), args.model_uri, env_manager=args.env_manager)
        if args.output:
            scored.write.mode("overwrite").parquet(args.output)
            print(f"scored {spark.read.parquet(args.output).count()} rows with {args.model_uri} -> {args.output}")
        else:
            scored.show(5, truncate=False)
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
