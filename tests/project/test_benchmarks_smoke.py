"""Each benchmark script still runs at its smallest setting and prints a well-formed table (timings are not
checked); where a benchmark times two implementations of the same computation, both give the same answer."""

import importlib
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
QUICK_RUNS = ["metrics_speed.py", "fairlof_speed.py", "fairlof_scale.py", "fairlof_paper.py", "scaff_speed.py",
              "scaff_paper.py", "mlflow_tracking_overhead.py", "fairband_overhead.py", "fairband_paper.py",
              "fairband_fit_times.py", "fairband_utilisation.py", "fairband_simulation.py", "spark_scoring.py",
              "knn_graph_cost.py", "pick_oracle.py", "serve_load.py", "reductions_speed.py",
              "reductions_scores.py", "fairband_figure6.py", "refit_rule.py", "refit_candidates.py",
              "parse_budget.py", "running_pick_overhead.py"]
# benchmarks that check their two sides agree before timing them, and how many checks they print
AGREEMENT_LINES = {"metrics_speed.py": 2, "fairlof_speed.py": 1, "fairlof_scale.py": 1, "spark_scoring.py": 2,
                   "reductions_speed.py": 1}
AGREE = re.compile(r"^agree: .*\|(?:relative )?difference\| = ([0-9.e+-]+) <= ([0-9.e+-]+)$")
RATIO = re.compile(r"^(\d+(?:\.\d+)?)x?$")


def markdown_tables(text: str) -> list[list[list[str]]]:
    """Each run of consecutive ``| ... |`` lines, as rows of stripped cells."""
    tables, current = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|") and line.rstrip().endswith("|"):
            current.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif current:
            tables.append(current)
            current = []
    return tables


def test_table_parser_reads_a_table():
    text = "title\n| a | b x |\n|---|---|\n| 1 | 2.5x |\n\nafter"
    assert markdown_tables(text) == [[["a", "b x"], ["---", "---"], ["1", "2.5x"]]]


def test_reports_give_mean_and_sd_in_percent_through_one_helper(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # as running a script from benchmarks/ does
    from report_cells import mean_sd_percent

    assert (mean_sd_percent([0.5, 0.7]), mean_sd_percent(iter([0.25]))) == ("60.0 ± 14.1", "25.0 ± 0.0")
    row = {"dataset": "german", "test_fair": 0.8, "val_fair": 0.9}
    for index, accuracy in enumerate((0.5, 0.7)):
        (tmp_path / f"r{index}.json").write_text(json.dumps({
            **row, "test_acc": accuracy, "method": "FB-auto", "seconds": 1, "selection": "robust",
            "dominated": False, "ceiling": {"validation": 0.9, "test": 0.85}, "failed": 0}))
    cells = "| 60.0 ± 14.1 | 80.0 ± 0.0 | 90.0 ± 0.0 |"
    assert f"| german | robust | 2 {cells}" in importlib.import_module("fairband_robust").report(tmp_path)
    assert f"| FB-auto {cells} 2 |" in importlib.import_module("decisions").report(tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("script", QUICK_RUNS)
def test_benchmark_quick_setting_runs(script, tmp_path):
    # the scripts' scratch stores (tempfile) in the test's folder, in RAM where conftest.py put it
    result = subprocess.run([sys.executable, str(BENCHMARKS / script), "--quick"], capture_output=True, text=True,
                            timeout=900, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr[-3000:]
    tables = markdown_tables(result.stdout)
    assert tables, f"{script} printed no table:\n{result.stdout[-2000:]}"
    for table in tables:
        header, separator, *rows = table
        assert all(set(cell) <= set("-: ") and cell for cell in separator), table[:2]
        assert rows, f"{script}: a table without rows: {header}"
        assert all(len(row) == len(header) for row in rows), f"{script}: ragged table under {header}"
        # ratio columns ("x ...", "... / ...", "speed-up") hold positive finite numbers
        for index, name in enumerate(header):
            if name.startswith("x ") or name in ("speed-up", "now / before"):
                for row in rows:
                    if row[index] in ("-", ""):  # not measured for this row
                        continue
                    match = RATIO.match(row[index])
                    assert match and 0 < float(match.group(1)) < math.inf, (script, name, row)
    checks = [AGREE.match(line) for line in result.stdout.splitlines() if line.startswith("agree:")]
    assert len(checks) >= AGREEMENT_LINES.get(script, 0), f"{script} did not report its agreement checks"
    for check in checks:
        assert check and float(check.group(1)) <= float(check.group(2)), check
