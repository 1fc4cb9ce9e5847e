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


SHIPPER = r"""
import sys
import numpy as np, pandas as pd
from sklearn.linear_model import LogisticRegression
from fairops.mlflow import _wheel, classifier

X = pd.DataFrame({"x": np.arange(20.0)})
model = LogisticRegression().fit(X, X["x"] > 9)
first, second = sys.argv[1:3]
classifier.save_model(model, first, input_example=X.head(2))
print("saved", _wheel.requirement(), flush=True)
sys.stdin.readline()  # the other process prunes the cache meanwhile
classifier.save_model(model, second, input_example=X.head(2))
print("saved", _wheel.requirement(), flush=True)
print("rebuilt", _wheel.fairops_wheel(), flush=True)
"""

PRUNER = r"""
import shutil, sys, time
from pathlib import Path
from fairops.mlflow import _wheel

root, wheel = Path(sys.argv[1]), Path(sys.argv[2])
time.sleep(0.05)  # newer than the shipper's entry
for i in range(_wheel.KEEP):  # the wheels of other source states, as other checkouts leave them
    (root / f"source-other-{i}").mkdir()
    shutil.copyfile(wheel, root / f"source-other-{i}" / wheel.name)
_wheel._prune(root)
"""


def test_a_wheel_another_process_prunes_is_still_shipped_and_then_rebuilt(wheel, tmp_path):
    import hashlib
    import os
    import shutil
    import subprocess
    import sys

    cache = tmp_path / "cache"
    cache.mkdir()
    shutil.copytree(wheel.parent, cache / wheel.parent.name)
    for work in wheel.parent.parent.glob("checkout-*"):  # the compiled kernels of the checkout: a rebuild is quick
        shutil.copytree(work, cache / work.name, symlinks=True)
    env = {**os.environ, _wheel.CACHE_ENV: str(cache)}
    models = [tmp_path / "first", tmp_path / "second"]
    shipper = subprocess.Popen([sys.executable, "-c", SHIPPER, *map(str, models)], env=env, text=True,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = shipper.stdout.readline().split()
        assert line[0] == "saved", shipper.stderr.read()
        requirement = line[1]
        subprocess.run([sys.executable, "-c", PRUNER, str(cache), str(wheel)], env=env, check=True)
        assert not (cache / wheel.parent.name).exists()  # the shipper's wheel is gone from the cache
        out, err = shipper.communicate("go\n", timeout=600)
    finally:
        if shipper.poll() is None:
            shipper.kill()
    assert shipper.returncode == 0, err
    lines = out.splitlines()
    assert lines[0] == f"saved {requirement}"  # the second save: the same wheel, from the bytes read once
    shipped = [(model / requirement).read_bytes() for model in models]
    assert shipped[0] == shipped[1] and hashlib.sha256(shipped[0]).hexdigest()[:16] == requirement.split("/")[1]
    rebuilt = Path(lines[1].split(" ", 1)[1])
    assert rebuilt.is_file() and rebuilt.parent == cache / wheel.parent.name  # built again, in the same entry


def test_the_running_kernels_are_seeded_where_setuptools_builds_its_own(tmp_path):
    from setuptools.dist import Distribution

    build = Distribution().get_command_obj("build")
    build.finalize_options()
    source, work = tmp_path / "checkout", tmp_path / "work"
    kernel = source / "fairops" / "scaff" / "_tree.cpython-311-x86_64-linux-gnu.so"
    kernel.parent.mkdir(parents=True)
    kernel.write_bytes(b"compiled")
    (source / "fairops" / "scaff" / "__pycache__").mkdir()
    (source / "fairops" / "scaff" / "__pycache__" / "stray.so").write_bytes(b"not a kernel")
    _wheel._seed_compiled_kernels(source, work)
    seeded = [path.relative_to(work) for path in work.rglob("*.so")]
    # setuptools compiles a kernel only when its C source is newer than this file: the time is the checkout's
    assert seeded == [Path(build.build_platlib) / "fairops" / "scaff" / kernel.name]
    assert (work / seeded[0]).read_bytes() == b"compiled"
    assert (work / seeded[0]).stat().st_mtime == kernel.stat().st_mtime
