import subprocess
import sys

from fairops.cli import main


def test_baseline_prints_the_task_metrics(capsys):
    assert main(["baseline", "--dataset", "german", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    for name in ("accuracy", "fairness", "auc_y", "auc_s"):
        assert name in out
    assert "task: positive class: good credit; accuracy: precision at 50% TPR; fairness: TPR ratio" in out


def test_unknown_dataset_is_refused():
    result = subprocess.run([sys.executable, "-m", "fairops.cli", "baseline", "--dataset", "nope"],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "invalid choice: 'nope'" in result.stderr
