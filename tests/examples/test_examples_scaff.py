import importlib.util
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scaff_theta_curve.py"


def test_theta_curve_example_trades_label_auc_for_group_parity(capsys):
    spec = importlib.util.spec_from_file_location("scaff_theta_curve", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path = module.main(["--rows", "6000", "--trees", "10", "--thetas", "0", "0.7", "1"])
    assert path.thetas.tolist() == [0.0, 0.7, 1.0]
    assert path.auc_s[0] > path.auc_s[1] >= 0.5  # fairness-aware splits separate the sexes less
    assert path.auc_s[2] == 0.5 and path.auc_y[2] == 0.5  # theta = 1 ignores the label: a constant score
    assert path.auc_y[0] > 0.8
    assert "AUC_S (sex)" in capsys.readouterr().out
