"""The README's API tour runs as written (in a scratch folder, so its mlflow.db lands there)."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_api_tour_runs(tmp_path, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README has no python block"
    monkeypatch.chdir(tmp_path)
    namespace = {}
    exec(compile(blocks[0], "README.md", "exec"), namespace)
    assert namespace["pick"].trial.values is not None
    assert len(namespace["study"].trials) == 206
    assert (tmp_path / "mlflow.db").exists()
    assert 0.5 <= namespace["auc_s"](namespace["scores"], namespace["data"].sensitive) <= 1
