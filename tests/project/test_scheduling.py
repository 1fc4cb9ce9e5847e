"""The work units pytest-xdist hands out (tests/scheduling.py): whole modules, shared-fixture groups, spread tests."""

import json

from tests.conftest import REPO
from tests.scheduling import (
    DURATIONS_FILE,
    EXPENSIVE_SESSION_FIXTURES,
    SPREAD_MODULES,
    durations,
    durations_of_run,
    work_unit,
)


def test_a_module_is_one_unit_and_modules_sharing_a_fixture_are_one_unit():
    assert work_unit("tests/metrics/test_decisions.py::test_a[1-2]") == "tests/metrics/test_decisions.py"
    assert work_unit("tests/metrics/test_decisions.py::TestKind::test_b") == "tests/metrics/test_decisions.py"
    assert work_unit("fairops/metrics/_auc.py::fairops.metrics._auc.auc_y") == "fairops/metrics/_auc.py"
    for fixture, modules in EXPENSIVE_SESSION_FIXTURES.items():
        assert {work_unit(f"{module}::test_x") for module in modules} == {fixture}
        assert all((REPO / module).is_file() for module in modules), modules
    (spread,) = SPREAD_MODULES
    assert work_unit(f"{spread}::test_run[a.py]") != work_unit(f"{spread}::test_run[b.py]")


def test_the_durations_table_sums_a_junit_file_per_unit(tmp_path):
    module, (fixture, (first, second)) = "tests/metrics/test_decisions.py", next(iter(
        EXPENSIVE_SESSION_FIXTURES.items()))
    cases = [(module, "test_a", 3.0), (module, "test_b", 4.5), (first, "test_c", 10.0), (second, "test_d", 2.0),
             ("tests/metrics/test_task.py", "test_e", 1.0)]
    junit = tmp_path / "junit.xml"
    junit.write_text("<testsuites><testsuite>" + "".join(
        f'<testcase classname="{path.removesuffix(".py").replace("/", ".")}" name="{name}" time="{seconds}"/>'
        for path, name, seconds in cases) + "</testsuite></testsuites>")
    assert durations_of_run(junit) == {fixture: 12, module: 8}  # units under 5 s are left out
    stored = json.loads(DURATIONS_FILE.read_text())
    assert durations() == stored and all(isinstance(v, int | float) and v >= 0 for v in stored.values())
