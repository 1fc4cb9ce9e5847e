"""Reading one file of a model directory: never through a link, never from a pipe or device, each file once.

A file is opened with ``O_NOFOLLOW | O_NONBLOCK`` and checked to be a regular file on the open descriptor, so
one swapped in after the folder was listed is refused too. :func:`read_listed` reads a file once and checks
its size and sha256 against its manifest entry (:mod:`fairops.mlflow.sealing` writes the manifest), reading
at most one byte past the size the entry gives.

>>> import os, tempfile
>>> folder = tempfile.mkdtemp()
>>> with open(os.path.join(folder, "state.json"), "wb") as handle:
...     _ = handle.write(b"{}")
>>> read_listed(folder, "state.json", {"bytes": 2, "sha256": sha256_file(os.path.join(folder, "state.json"))}, True)
b'{}'
"""

from __future__ import annotations

import errno
import hashlib
import io
import os
import stat

from ..errors import InputError

# Never follow a link, never wait on a pipe; the open file itself is then checked to be a regular file.
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_BLOCK = 1 << 20


class ModelFilesError(InputError):
    """A saved model is missing, tampered with, truncated, unsigned where a signature is required, or unknown."""


def sha256_file(path: str) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _irregular(folder: str, relative: str) -> ModelFilesError:
    return ModelFilesError(f"model directory {folder} holds {relative!r}, which is not a regular file (a pipe, "
                           "socket or device); nothing of it was read")


def refuse_irregular(folder: str, relative: str) -> None:
    """Refuse ``folder/relative`` unless it is a regular file or a folder (never followed, never opened).

    A named pipe would block the first read of it forever, a device could be endless, and a link
    points outside what the manifest covers.
    """
    try:
        mode = os.lstat(os.path.join(folder, relative)).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISLNK(mode):
        raise ModelFilesError(f"model directory {folder} holds a symbolic link: {relative!r}")
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise _irregular(folder, relative)


def _open_regular(folder: str, name: str, missing: str | None = None) -> io.FileIO:
    """``folder/name`` open for reading, refused unless it is a regular file.

    The check is made on the open file itself, so a link, pipe or device put in the file's place after
    the folder was listed is refused too: never followed, never waited on.
    """
    refuse_irregular(folder, name)  # a device seen here is never opened at all
    try:
        descriptor = os.open(os.path.join(folder, name), _OPEN_FLAGS)
    except FileNotFoundError:
        raise ModelFilesError(missing or f"model file {name!r} is missing from {folder}") from None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise ModelFilesError(f"model directory {folder} holds a symbolic link: {name!r}") from None
        if error.errno == errno.ENXIO:  # a socket
            raise _irregular(folder, name) from None
        raise ModelFilesError(f"model file {name!r} in {folder} cannot be opened: {error.strerror}") from None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise _irregular(folder, name)
    return io.FileIO(descriptor, "rb", closefd=True)


def read_file(folder, name: str, missing: str | None = None) -> bytes:
    """The bytes of ``folder/name``, read through one open regular file (``missing``: the message if absent).

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> os.mkfifo(os.path.join(folder, "pipe"))
    >>> try:
    ...     read_file(folder, "pipe")
    ... except ModelFilesError as error:
    ...     print(str(error).split(" holds ")[1])
    'pipe', which is not a regular file (a pipe, socket or device); nothing of it was read
    """
    folder = os.fspath(folder)
    with _open_regular(folder, name, missing) as handle:
        try:
            return handle.readall()
        except OSError as error:
            raise ModelFilesError(f"model file {name!r} in {folder} cannot be read: {error.strerror}") from None


def _check_entry(folder: str, name: str, expected) -> None:
    if not isinstance(expected, dict) or not isinstance(expected.get("sha256"), str) \
            or type(expected.get("bytes")) is not int:
        raise ModelFilesError(f"the manifest entry of {name!r} in {folder} is not {{'bytes': int, 'sha256': str}}: "
                              f"{str(expected)[:100]}")


def _check_digest(folder: str, name: str, size: int, digest: str | None, expected: dict) -> None:
    if size != expected["bytes"]:
        raise ModelFilesError(f"model file {name!r} in {folder} has {size} bytes, the manifest says "
                              f"{expected['bytes']} (truncated or modified)")
    if digest != expected["sha256"]:
        raise ModelFilesError(f"model file {name!r} in {folder} does not match its sha256 in the manifest "
                              "(modified)")


def check_bytes(folder: str, name: str, data: bytes, expected) -> None:
    """Refuse the bytes read from ``folder/name`` unless they have the size and sha256 a manifest entry gives."""
    _check_entry(folder, name, expected)
    _check_digest(folder, name, len(data), hashlib.sha256(data).hexdigest(), expected)


def read_listed(folder: str, name: str, expected, keep: bool) -> bytes | None:
    """Read ``folder/name`` once and check it against its manifest entry; its bytes when ``keep``.

    At most one byte past the entry's size is read, so a file grown after sealing is refused without
    being read whole; a file not kept is hashed block by block.
    """
    _check_entry(folder, name, expected)
    size, digest, kept, done = expected["bytes"], hashlib.sha256(), [], 0
    with _open_regular(folder, name) as handle:
        on_disk = os.fstat(handle.fileno()).st_size
        if on_disk != size:
            _check_digest(folder, name, on_disk, None, expected)
        try:
            while done <= size:
                block = handle.read(min(size + 1 if keep else _BLOCK, size + 1 - done))
                if not block:
                    break
                digest.update(block)
                done += len(block)
                if keep:
                    kept.append(block)
        except OSError as error:
            raise ModelFilesError(f"model file {name!r} in {folder} cannot be read: {error.strerror}") from None
    _check_digest(folder, name, done, digest.hexdigest(), expected)
    return b"".join(kept) if keep else None
