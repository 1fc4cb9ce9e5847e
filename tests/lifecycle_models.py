"""Registered versions for the lifecycle tests, made by examples/promote_and_monitor.py's own functions:
real classifiers on synthetic rows, registered with register_best and the tags fairops tune sets."""

import importlib.util
from pathlib import Path

_PATH = Path(__file__).resolve().parents[1] / "examples" / "promote_and_monitor.py"
_SPEC = importlib.util.spec_from_file_location("promote_and_monitor", _PATH)
example = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(example)

FEATURES, rows = example.FEATURES, example.make_rows
register = example.register_version
