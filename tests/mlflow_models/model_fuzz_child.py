"""Child process of tests/mlflow_models/test_model_fuzz.py: load edited models with fairops' loader and predict.

Usage: ``python model_fuzz_child.py PLAN.json FIRST`` where the plan holds ``kind`` ("scaff",
"fairlof" or "classifier"; a case's own ``kind`` overrides it), ``rows`` (a DataFrame in pandas' "split" form;
FairLOF's also has ``sensitive``) and ``cases`` (``[{"id", "path"}, ...]``; a case's own ``rows`` override the
plan's). From case ``FIRST`` on, each
model is loaded and used, and one JSON line per case is printed (and flushed) before the next starts, so a
crash or a hang is attributed to the first case that did not report (a line ``{"ready": true}`` comes first,
once the imports are done, so the parent's watchdog can give the imports longer than one case):

- ``refused``: a ValueError or TypeError (fairops' ModelFilesError is a ValueError), with its message;
- ``finite``: the model answered with finite numbers of the right shape (and the answer's digest);
- ``not finite`` or ``other error``: what the test counts as failures.
"""

import hashlib
import json
import sys

import numpy as np
import pandas as pd


def _use_scaff(model, rows):
    proba = model.predict_proba(rows)
    leaves = model.apply(rows)
    ok = proba.shape == (len(rows), 2) and np.all(np.isfinite(proba)) and np.all((proba >= 0) & (proba <= 1))
    ok = ok and np.all(leaves >= 0) and np.all(leaves < np.diff(model.node_offsets_).max())
    return ok, proba


def _use_fairlof(model, rows, sensitive):
    scores = model.score_samples(rows.to_numpy(), sensitive_features=sensitive)
    labels = model.predict(rows.to_numpy(), sensitive_features=sensitive)
    ok = scores.shape == (len(rows),) and np.all(np.isfinite(scores)) and set(np.unique(labels)) <= {-1, 1}
    return ok, scores


def _use_classifier(model, rows):
    proba = model.predict_proba(rows)
    ok = proba.shape == (len(rows), 2) and np.all(np.isfinite(proba)) and np.all((proba >= 0) & (proba <= 1))
    return ok, proba


def main(plan_path: str, first: int) -> None:
    with open(plan_path) as handle:
        plan = json.load(handle)
    from fairops.mlflow import loader

    rows = pd.DataFrame(**plan["rows"])
    sensitive = pd.DataFrame(**plan["sensitive"]) if "sensitive" in plan else None
    print(json.dumps({"ready": True}), flush=True)
    for case in plan["cases"][first:]:
        report = {"id": case["id"]}
        try:
            model = loader.load_native(case["path"])
            kind = case.get("kind", plan["kind"])
            if kind == "classifier":
                ok, answer = _use_classifier(model, pd.DataFrame(**case["rows"]) if "rows" in case else rows)
            elif kind == "scaff":
                ok, answer = _use_scaff(model, rows)
            else:
                ok, answer = _use_fairlof(model, rows, sensitive)
            report["outcome"] = "finite" if ok else "not finite"
            report["digest"] = hashlib.sha256(np.ascontiguousarray(answer, dtype=np.float64).tobytes()).hexdigest()
        except (ValueError, TypeError) as error:
            report.update(outcome="refused", error=type(error).__name__, message=str(error)[:800])
        except Exception as error:  # anything else is a finding: reported, the loop goes on
            report.update(outcome="other error", error=type(error).__name__, message=str(error)[:800])
        print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
