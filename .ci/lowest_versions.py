"""Print pip constraints pinning the libraries fairops integrates with to the lower bounds in pyproject.toml.

CI installs the suite once with the newest installable releases (the README's test command) and once
with these pins, so both ends of each supported range are tested.

    python .ci/lowest_versions.py > constraints.txt
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

PINNED = ("mlflow", "optuna")


def lower_bounds(pyproject: Path) -> dict[str, str]:
    dependencies = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    bounds = {}
    for requirement in dependencies:
        name = re.match(r"[A-Za-z0-9_.-]+", requirement).group(0).lower()
        if name in PINNED:
            match = re.search(r">=\s*([0-9][0-9A-Za-z.]*)", requirement)
            if match is None:
                sys.exit(f"{requirement!r} in pyproject.toml has no lower bound")
            bounds[name] = match.group(1)
    missing = sorted(set(PINNED) - set(bounds))
    if missing:
        sys.exit(f"pyproject.toml does not list {missing}")
    return bounds


if __name__ == "__main__":
    for name, version in lower_bounds(Path(__file__).resolve().parents[1] / "pyproject.toml").items():
        print(f"{name}=={version}")
