"""Each benchmark script still runs, at its smallest setting (timings are not checked)."""

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
QUICK_RUNS = ["metrics_speed.py", "fairlof_speed.py", "fairlof_paper.py", "scaff_speed.py", "scaff_paper.py", "mlflow_tracking_overhead.py",
              "fairband_overhead.py", "fairband_paper.py", "fairband_fit_times.py", "fairband_utilisation.py",
              "fairband_simulation.py"]


@pytest.mark.parametrize("script", QUICK_RUNS)
def test_benchmark_quick_setting_runs(script):
    result = subprocess.run([sys.executable, str(BENCHMARKS / script), "--quick"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "x |" in result.stdout or "|" in result.stdout
