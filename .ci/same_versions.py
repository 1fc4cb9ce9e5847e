"""Exit 0 when the installed versions equal every ``name==version`` pin in the constraints file given.

Prints the comparison, so a CI log says which versions each run tested.
"""

from __future__ import annotations

import sys
from importlib.metadata import version

from packaging.version import Version


def main(constraints: str) -> int:
    same = True
    for line in open(constraints, encoding="utf-8"):
        name, _, pinned = line.strip().partition("==")
        if not pinned:
            continue
        installed = version(name)
        equal = Version(installed) == Version(pinned)
        same &= equal
        print(f"{name}: newest installable {installed}, lower bound {pinned}" + ("" if equal else " (tested apart)"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
