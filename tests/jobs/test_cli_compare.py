import csv

import pytest

from fairops.cli import main


@pytest.mark.slow
def test_compare_writes_table_csv_and_picture(tmp_path, capsys):
    code = main(["compare", "--dataset", "german", "--seeds", "2", "--methods", "rs,rs-bal,fb-auto",
                 "--families", "logistic_regression", "--max-train-rows", "300", "--out-dir", str(tmp_path)])
    assert code == 0
    out = capsys.readouterr().out
    assert "| FB-auto |" in out and "| RS-bal |" in out
    # progress off a terminal: lines per run (RS-bal reuses the RS run), each ending at all its fits
    for seed in (0, 1):
        assert f"  seed {seed} RS: fits 24/24 (100%)" in out and f"  seed {seed} FB-auto: fits 206/206 (100%)" in out
        assert sum(f"seed {seed} FB-auto: fits" in line and "rung 0 of bracket 4 done" in line
                   for line in out.splitlines()) == 1
    assert "RS-bal: fits" not in out
    assert "task: positive class: good credit; accuracy: precision at 50% TPR" in out
    assert ("| tuner | val precision | val TPR ratio | test precision | test TPR ratio | fairness loss | dominated "
            "| runs | failed fits |") in out
    with open(tmp_path / "compare-german.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["seed"], r["tuner"]) for r in rows] == [
        ("0", "RS"), ("0", "RS-bal"), ("0", "FB-auto"), ("1", "RS"), ("1", "RS-bal"), ("1", "FB-auto")]
    assert {r["selection"] for r in rows} == {"robust"} and {r["dominated"] for r in rows} == {"False"}
    assert {r["fits"] for r in rows if r["tuner"] == "FB-auto"} == {"206"}
    assert {r["fits"] for r in rows if r["tuner"].startswith("RS")} == {"24"}
    assert all(0 <= float(r["test_fair"]) <= 1 for r in rows)
    assert all(int(r["failed"]) >= 0 for r in rows)
    assert (tmp_path / "compare-german.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_unknown_method_is_refused(tmp_path, capsys):
    assert main(["compare", "--dataset", "german", "--methods", "hb,bohb", "--out-dir", str(tmp_path)]) == 2
    assert "unknown method(s) ['bohb']" in capsys.readouterr().err


@pytest.mark.slow
def test_compare_per_group_blind_meets_the_target_in_each_group(tmp_path, capsys):
    code = main(["compare", "--dataset", "german", "--seeds", "1", "--methods", "rs", "--decision", "per-group",
                 "--blind", "--families", "logistic_regression", "--max-train-rows", "300", "--no-progress",
                 "--out-dir", str(tmp_path)])
    assert code == 0
    out = capsys.readouterr().out
    assert "decisions: one threshold per group of sex, each at the task's target on validation; models do not " \
           "see sex" in out
    with open(tmp_path / "compare-german-per-group-blind.csv") as handle:
        (row,) = list(csv.DictReader(handle))
    # each sex at ceil(0.5 * its positives) true positives: the ratio is 1 up to that rounding
    assert float(row["val_fair"]) > 0.98


def test_blind_refuses_scaff(tmp_path, capsys):
    assert main(["compare", "--dataset", "german", "--blind", "--families", "scaff_forest",
                 "--out-dir", str(tmp_path)]) == 2
    assert "--families scaff_forest does not apply with --blind" in capsys.readouterr().err
