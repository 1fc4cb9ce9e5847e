"""Which pytest-xdist worker runs which tests: whole modules, and the modules sharing an expensive session fixture
together, the longest first.

pytest-xdist's ``--dist loadgroup`` reads a test's ``xdist_group`` mark from a suffix it writes into the test's
node id; pytest 9.2 builds node ids another way, the suffix is lost, and every test is scheduled on its own
(pytest-xdist issue 1386): a module's tests then run on both workers and its module-scoped fixtures (a whole
tune, a server, a browser) are made twice. ``SharedFixtureScheduling`` groups by the module path read from the
node id, which every pytest version writes, so it needs no mark.

Work units go out longest first (``DURATIONS``: seconds of test work per unit in a full run, from its junit
file), so that the last unit to start is a short one and both workers finish together. A unit missing from the
table counts as short; the figures only order the work, a stale table costs time, never a result.

    python -m tests.scheduling junit.xml     # the table from a full run's ``--junitxml`` file
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ElementTree
from collections import Counter
from pathlib import Path

#: session fixtures that make something expensive (a whole tune), and the test modules using them: each fixture's
#: modules run on one worker, so it is made once per run (conftest.py refuses a module missing here)
EXPENSIVE_SESSION_FIXTURES = {
    "single": ("tests/jobs/test_distributed.py", "tests/jobs/test_grpc_proxy.py"),
    "adult_tune": ("tests/mlflow_models/test_mlflow_champion.py", "tests/serving/test_spark_scoring.py"),
    "german_fits": ("tests/jobs/test_cli_lifecycle.py", "tests/jobs/test_one_truth.py"),
}
#: modules whose tests share nothing costlier than a test: each test is a unit of its own, spread over the workers
SPREAD_MODULES = ("tests/project/test_benchmarks_smoke.py",)
ROOT = Path(__file__).resolve().parents[1]  # node ids are paths from here
DURATIONS_FILE = Path(__file__).with_name("durations.json")
SHORTEST_LISTED = 5.0  # seconds: shorter units are left out of the table


def work_unit(nodeid: str) -> str:
    """The unit of work a test belongs to: its module, the group of a shared fixture, or (``SPREAD_MODULES``) the
    test itself."""
    module = nodeid.split("::", 1)[0]
    if module in SPREAD_MODULES:
        return nodeid
    for fixture, modules in EXPENSIVE_SESSION_FIXTURES.items():
        if module in modules:
            return fixture
    return module


def durations() -> dict[str, float]:
    """``DURATIONS_FILE``'s seconds per unit of work (empty when the file is missing)."""
    try:
        return json.loads(DURATIONS_FILE.read_text())
    except FileNotFoundError:
        return {}


def make_scheduler(config, log):
    """A ``LoadScopeScheduling`` whose scopes are :func:`work_unit`'s, handed out longest first."""
    from xdist.scheduler import LoadScopeScheduling

    class SharedFixtureScheduling(LoadScopeScheduling):
        seconds = durations()

        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

        def _assign_work_unit(self, node) -> None:
            longest = max(self.workqueue, key=lambda unit: self.seconds.get(unit, 0.0))
            self.workqueue.move_to_end(longest, last=False)
            super()._assign_work_unit(node)

    return SharedFixtureScheduling(config, log)


def _node_id(testcase) -> str:
    """The pytest node id of a junit ``testcase`` (its classname holds the module's dotted path)."""
    parts = testcase.get("classname").split(".")
    for end in range(len(parts), 0, -1):
        path = Path(*parts[:end]).with_suffix(".py")
        if (ROOT / path).is_file():
            return "::".join([path.as_posix(), *parts[end:], testcase.get("name")])
    return "::".join([*parts, testcase.get("name")])


def durations_of_run(junit: Path) -> dict[str, float]:
    """Seconds of test work per unit in a junit file, units of at least ``SHORTEST_LISTED`` seconds."""
    seconds: Counter[str] = Counter()
    for testcase in ElementTree.parse(junit).getroot().iter("testcase"):
        seconds[work_unit(_node_id(testcase))] += float(testcase.get("time", 0))
    return {unit: round(total) for unit, total in seconds.most_common() if total >= SHORTEST_LISTED}


if __name__ == "__main__":
    DURATIONS_FILE.write_text(json.dumps(durations_of_run(Path(sys.argv[1])), indent=1) + "\n")
