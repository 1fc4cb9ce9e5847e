"""The wheel of the running fairops, so a saved model installs exactly the code that wrote it.

A fairops model directory carries ``wheels/<digest>/fairops-<version>-<tags>.whl`` and names that
path in its ``requirements.txt``. MLflow's environment managers (virtualenv, the default of
``mlflow models serve``, and uv) install a model's requirements from inside the model directory, as
they do for ``mlflow.models.add_libraries_to_model``, so the wheel installs from the model itself and
everything else from the package index. The digest folder (the wheel's sha256) makes two builds of
one version two distinct requirements, so MLflow's cache of environments never serves a model with
another build's code.

Where the wheel comes from:

- a regular install (from a wheel, an sdist or ``pip install .``): the installed files are packed back
  into a wheel from the distribution's ``RECORD`` (no compiler needed);
- an editable install (a development checkout): ``pip wheel --no-deps`` of the checkout, which compiles
  the kernels; with the running environment's setuptools, Cython and NumPy when it has them
  (``--no-build-isolation``: quick, offline), else in an isolated build environment pip fills from the
  package index (an ordinary ``pip install -e .`` leaves Cython out of the environment).

Either way the wheel is built once per source state and kept in ``$FAIROPS_WHEEL_CACHE`` (default
``~/.cache/fairops/wheels``), in a folder named by a digest of what goes into it; the cache keeps the
:data:`KEEP` most recently used. A process reads the wheel once and ships those bytes into every model
it saves, so another process pruning the cache meanwhile cannot take the wheel away from it; a wheel
pruned before it was read is built again.
"""

from __future__ import annotations

import base64
import contextlib
import csv
import functools
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path

DISTRIBUTION = "fairops"
WHEELS_FOLDER = "wheels"
CACHE_ENV = "FAIROPS_WHEEL_CACHE"
KEEP = 8  # wheels kept in the cache, newest first
# What setup.py and pyproject.toml turn into the wheel of a development checkout.
_SOURCE_ENTRIES = ("pyproject.toml", "setup.py", "setup.cfg", "MANIFEST.in", "README.md", "fairops", "plugins",
                   "cython_ext")
_NOT_SOURCE = (".so", ".pyd", ".c", ".pyc")
_NOT_PACKED = ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json")


def _cache_root() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "fairops" / "wheels")


def _distribution():
    """The installed distribution (an installer's RECORD), not a build's stray ``.egg-info`` on the path."""
    from importlib.metadata import PackageNotFoundError, distributions

    found = [dist for dist in distributions(name=DISTRIBUTION) if dist.read_text("RECORD")]
    if not found:
        raise PackageNotFoundError(f"{DISTRIBUTION} is not installed by pip (no RECORD); install it to ship it")
    return found[0]


def _editable_source(dist) -> Path | None:
    """The checkout of an editable install (PEP 610's ``direct_url.json``), else None."""
    text = dist.read_text("direct_url.json")
    if not text:
        return None
    info = json.loads(text)
    if not info.get("dir_info", {}).get("editable") or not info.get("url", "").startswith("file://"):
        return None
    from urllib.parse import unquote, urlparse

    return Path(unquote(urlparse(info["url"]).path))


def _source_digest(source: Path) -> str:
    digest = hashlib.sha256()
    for entry in _SOURCE_ENTRIES:
        top = source / entry
        paths = [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file()) if top.is_dir() else []
        for path in paths:
            relative = path.relative_to(source).as_posix()
            if path.suffix in _NOT_SOURCE or "__pycache__" in path.parts or ".egg-info" in relative:
                continue
            digest.update(relative.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:24]


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _wheel_name(dist) -> str:
    """``<name>-<version>[-<build>]-<python>-<abi>-<platform>.whl`` from the installed WHEEL file."""
    fields = [line.split(":", 1) for line in (dist.read_text("WHEEL") or "").splitlines() if ":" in line]
    tags = [value.strip() for key, value in fields if key.strip() == "Tag"]
    builds = [value.strip() for key, value in fields if key.strip() == "Build"]
    if not tags:
        raise RuntimeError(f"the installed {DISTRIBUTION} has no wheel tag in its WHEEL file; reinstall it with pip")
    parts = [sorted({tag.split("-")[i] for tag in tags}) for i in range(3)]
    name = dist.metadata["Name"].replace("-", "_")
    return "-".join([name, dist.version, *builds, *(".".join(p) for p in parts)]) + ".whl"


def repack(dist, folder: Path) -> Path:
    """Pack an installed (non-editable) distribution back into a wheel in ``folder``."""
    info_dir = next((str(f).split("/")[0] for f in dist.files if str(f).split("/")[0].endswith(".dist-info")), None)
    if info_dir is None:
        raise RuntimeError(f"the installed {DISTRIBUTION} lists no .dist-info folder in its RECORD")
    target = folder / _wheel_name(dist)
    records = []
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as wheel:
        for file in sorted(dist.files, key=str):
            name = str(file).replace(os.sep, "/")
            if name.startswith("..") or "__pycache__" in name or name.endswith(".pyc") \
                    or (name.startswith(info_dir + "/") and name.split("/")[-1] in _NOT_PACKED):
                continue
            data = Path(dist.locate_file(file)).read_bytes()
            wheel.writestr(name, data)
            records.append((name, _record_hash(data), str(len(data))))
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerows([*records, (f"{info_dir}/RECORD", "", "")])
        wheel.writestr(f"{info_dir}/RECORD", buffer.getvalue())
    return target


def _build(source: Path, folder: Path) -> Path:
    """``pip wheel`` of a copy of the checkout, kept between builds so unchanged kernels are not recompiled.

    Building in place would leave ``build/`` and ``.egg-info`` in the checkout; the copy keeps the
    files' times, so setuptools sees which compiled kernels are still up to date, the running ones included.
    """
    work = _cache_root() / f"checkout-{hashlib.sha256(str(source).encode()).hexdigest()[:16]}"
    work.mkdir(parents=True, exist_ok=True)
    with _locked(work / ".lock"):
        for entry in _SOURCE_ENTRIES:
            target = work / entry
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
            if (source / entry).is_dir():
                shutil.copytree(source / entry, target,
                                ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd", "*.egg-info"))
            elif (source / entry).is_file():
                shutil.copy2(source / entry, target)
        _seed_compiled_kernels(source, work)
        command = [sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation_flags(), "--quiet",
                   "--disable-pip-version-check", "--wheel-dir", str(folder), str(work)]
        done = subprocess.run(command, capture_output=True, text=True)
    wheels = sorted(folder.glob(f"{DISTRIBUTION}-*.whl"))
    if done.returncode != 0 or len(wheels) != 1:
        raise RuntimeError(f"cannot build the {DISTRIBUTION} wheel a model ships with from {source} "
                           f"(pip exited {done.returncode}): {(done.stderr or done.stdout)[-2000:]}\n"
                           "Give the model explicit pip_requirements to save it without the wheel.")
    return wheels[0]


def _seed_compiled_kernels(source: Path, work: Path) -> None:
    """Put the checkout's compiled kernels (the ones running) where the wheel build writes its own.

    setuptools compiles a kernel only when its translated C source is newer than the compiled file, so a
    kernel unchanged since the checkout was built is shipped as it runs instead of compiled a second time;
    one edited since is compiled as before. Where setuptools names its folder differently, nothing is seeded.
    """
    platform_lib = work / "build" / f"lib.{sysconfig.get_platform()}-{sys.implementation.cache_tag}"
    for compiled in sorted((source / DISTRIBUTION).rglob("*")):
        if compiled.suffix in (".so", ".pyd") and "__pycache__" not in compiled.parts:
            target = platform_lib / compiled.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(compiled, target)


#: The modules of the build requirements in pyproject.toml's [build-system].
BUILD_MODULES = ("setuptools", "Cython", "numpy")


def isolation_flags(modules=BUILD_MODULES) -> list[str]:
    """``["--no-build-isolation"]`` when every build requirement imports here, else ``[]`` (pip isolates).

    >>> isolation_flags(("json",)), isolation_flags(("no_such_build_backend",))
    (['--no-build-isolation'], [])
    """
    from importlib.util import find_spec

    def present(name: str) -> bool:
        try:
            return find_spec(name) is not None
        except (ImportError, ValueError):  # a parent package missing, or a module blocked in sys.modules
            return False

    return ["--no-build-isolation"] if all(present(name) for name in modules) else []


@contextlib.contextmanager
def _locked(path: Path):
    """An exclusive lock on ``path`` (one build of a checkout at a time across processes)."""
    with open(path, "w") as handle:
        try:
            import fcntl
        except ImportError:  # not POSIX: builds of one checkout must not overlap
            yield
            return
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _record_digest(dist) -> str:
    return hashlib.sha256((dist.read_text("RECORD") or "").encode()).hexdigest()[:24]


@functools.cache
def _cache_key() -> tuple:
    """``(distribution, checkout or None, cache folder name)`` of the running fairops (its source state, once)."""
    dist = _distribution()
    source = _editable_source(dist)
    key = f"source-{_source_digest(source)}" if source else f"installed-{dist.version}-{_record_digest(dist)}"
    return dist, source, key


def fairops_wheel() -> Path:
    """Path of the wheel of the running fairops in the cache, built or repacked when it is not there.

    Not there includes pruned by another process (which keeps the :data:`KEEP` newest): it is then
    built again. Each use marks the entry as recent, so the wheels in use are the last pruned.
    """
    dist, source, key = _cache_key()
    cached = _cache_root() / key
    wheels = sorted(cached.glob(f"{DISTRIBUTION}-*.whl"))
    if not wheels:
        cached.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=cached.parent))
        try:
            _build(source, scratch) if source else repack(dist, scratch)
            try:
                os.replace(scratch, cached)  # atomic; a concurrent builder may have put the same wheel there
            except OSError:
                if not cached.is_dir():
                    raise
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        _prune(cached.parent)
        wheels = sorted(cached.glob(f"{DISTRIBUTION}-*.whl"))
    if not wheels:  # pruned again at once: only if more than KEEP source states are saved at the same moment
        raise RuntimeError(f"the {DISTRIBUTION} wheel in {cached} was removed as soon as it was built; another process "
                           f"is pruning the cache ({CACHE_ENV}): give each a cache of its own")
    with contextlib.suppress(OSError):
        os.utime(cached)
    return wheels[0]


@functools.cache
def _wheel_file() -> tuple[str, bytes]:
    """``(file name, bytes)`` of the running fairops' wheel, read once per process.

    Models saved later ship these bytes, so a wheel another process prunes from the cache meanwhile
    changes nothing here; one pruned between being found and being read is built again.
    """
    for _ in range(3):
        wheel = fairops_wheel()
        try:
            return wheel.name, wheel.read_bytes()
        except FileNotFoundError:
            continue
    raise RuntimeError(f"the {DISTRIBUTION} wheel kept being removed from {_cache_root()} before it could be read")


def _prune(root: Path) -> None:
    """Keep the :data:`KEEP` newest cached wheels (each source state of a checkout makes one)."""
    entries = sorted((p for p in root.iterdir() if p.is_dir() and p.name.startswith(("source-", "installed-"))),
                     key=lambda p: p.stat().st_mtime, reverse=True)
    for old in entries[KEEP:]:
        shutil.rmtree(old, ignore_errors=True)


@functools.cache
def requirement() -> str:
    """The ``requirements.txt`` line of the shipped wheel: ``wheels/<sha256 prefix>/<wheel file>``."""
    name, data = _wheel_file()
    return f"{WHEELS_FOLDER}/{hashlib.sha256(data).hexdigest()[:16]}/{name}"


def ship(model_dir, line: str) -> None:
    """Write the wheel into ``model_dir`` at the path ``line`` (from :func:`requirement`) names."""
    target = Path(model_dir) / line
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(_wheel_file()[1])
