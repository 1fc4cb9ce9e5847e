"""The fairops wheel a model ships: built from a checkout, packed back from a regular install, named by digest."""

import zipfile
from importlib.metadata import PathDistribution
from pathlib import Path

import pytest

import fairops
from fairops.mlflow import _wheel
from fairops.mlflow.sealing import sha256_file

pytestmark = pytest.mark.slow  # the first call builds the wheel of the checkout (cached after)
SOURCE = Path(fairops.__file__).resolve().parent


@pytest.fixture(scope="module")
def wheel():
    return _wheel.fairops_wheel()


def test_the_wheel_holds_the_running_package(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = archive.read(f"fairops-{fairops.__version__}.dist-info/METADATA").decode()
        entry_points = archive.read(f"fairops-{fairops.__version__}.dist-info/entry_points.txt").decode()
    modules = {f"fairops/{p.relative_to(SOURCE).as_posix()}" for p in SOURCE.rglob("*.py")
               if "__pycache__" not in p.parts}
    assert modules <= names
    assert {"fairops/scaff/_tree", "fairops/fairlof/_kernel", "fairops/metrics/_ranks"} <= {
        name.split(".")[0] for name in names if name.endswith(".so")}
    assert any(name.startswith("fairops/datasets/data/") for name in names)
    assert f"Version: {fairops.__version__}" in metadata and "Requires-Dist: mlflow" in metadata
    assert "fairops = fairops.cli:main" in entry_points
    assert wheel.name.startswith(f"fairops-{fairops.__version__}-cp3")


def test_a_regular_install_is_packed_back_into_the_same_wheel(wheel, tmp_path):
    site = tmp_path / "site-packages"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)  # what pip leaves of it, RECORD included
    installed = PathDistribution(site / f"fairops-{fairops.__version__}.dist-info")
    repacked = _wheel.repack(installed, tmp_path)
    assert repacked.name == wheel.name
    with zipfile.ZipFile(wheel) as original, zipfile.ZipFile(repacked) as again:
        assert set(again.namelist()) == set(original.namelist())
        record = f"fairops-{fairops.__version__}.dist-info/RECORD"
        for name in original.namelist():
            if name != record:
                assert again.read(name) == original.read(name), name
        rows = {line.split(",")[0]: line for line in again.read(record).decode().splitlines()}
        assert set(rows) == set(original.namelist())
        assert rows["fairops/__init__.py"].split(",")[2] == str(len(original.read("fairops/__init__.py")))


def test_the_requirement_names_the_wheel_by_its_digest(wheel, tmp_path):
    line = _wheel.requirement()
    assert line == f"wheels/{sha256_file(str(wheel))[:16]}/{wheel.name}"
    _wheel.ship(tmp_path, line)
    assert sha256_file(str(tmp_path / line)) == sha256_file(str(wheel))
