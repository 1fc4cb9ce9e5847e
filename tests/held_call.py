"""Run the ``fairops`` command with one call held, so a test can kill the process inside that call.

    python tests/held_call.py HOLD_FILE MODULE:FUNCTION AFTER fairops-arguments...

The ``AFTER + 1``-th call of ``MODULE.FUNCTION`` (looked up in that module's globals at each call, as the
module's own code calls it) writes this process's id to ``HOLD_FILE`` and then waits forever. A test that
sees ``HOLD_FILE`` knows the process is inside that call and stays there until it is killed: no timing
decides what the kill interrupts, however loaded the machine is.
"""

import importlib
import itertools
import os
import sys
import threading
from pathlib import Path


def hold(hold_file: str, target: str, after: int) -> None:
    """Replace ``target`` (``"module:function"``) by a copy that holds its ``after + 1``-th call."""
    module_name, _, name = target.partition(":")
    module = importlib.import_module(module_name)
    original = getattr(module, name)
    calls = itertools.count(1)

    def held(*args, **kwargs):
        if next(calls) == after + 1:
            Path(hold_file).write_text(str(os.getpid()))
            threading.Event().wait()  # never set: the call is held until the process is killed
        return original(*args, **kwargs)

    setattr(module, name, held)


def main(argv: list[str]) -> int:
    hold_file, target, after, *command = argv
    hold(hold_file, target, int(after))
    from fairops.cli import main as fairops

    return fairops(command)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
