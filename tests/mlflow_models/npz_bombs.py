"""Crafted ``.npz`` entries that would take far more memory than their file: for the size-limit tests."""

import functools
import io
import struct
import zipfile
from pathlib import Path

import numpy as np

# Offset of "uncompressed size" in a zip central directory record (after signature, versions, flags,
# method, time, date, crc and compressed size).
_CENTRAL_SIZE_OFFSET = 24
# Offset of "relative offset of local header" in a zip central directory record.
_CENTRAL_LOCAL_OFFSET = 42
# The end of central directory record: signature, disk numbers, entry counts, directory size and start, comment.
_END_RECORD = struct.Struct("<4s4H2LH")
_END_SIGNATURE = b"PK\x05\x06"


@functools.cache
def _deflated_zeros_records(name: str, n_bytes: int) -> tuple[bytes, bytes]:
    """(local record with its data, central directory record at offset 0) of ``name.npy`` holding ``n_bytes``
    of float64 zeros, deflated once per run: deflating 64 MiB takes about a second, and every test appending the
    bomb appends these same bytes."""
    header = {"descr": "<f8", "fortran_order": False, "shape": (n_bytes // 8,)}
    block = bytes(1 << 20)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
            np.lib.format.write_array_header_1_0(member, header)
            for start in range(0, n_bytes - n_bytes % 8, len(block)):
                member.write(block[: min(len(block), n_bytes - n_bytes % 8 - start)])
    blob = buffer.getvalue()
    *_, central_size, central_start, _ = _END_RECORD.unpack_from(blob, blob.rfind(_END_SIGNATURE))
    return blob[:central_start], blob[central_start:central_start + central_size]


def add_deflated_zeros(npz_path, name: str, n_bytes: int) -> None:
    """Append ``name.npy``: a real float64 zero array of ``n_bytes`` bytes, deflated (about 1000:1).

    The member goes where ``zipfile``'s append mode would put it (after the last member, the central directory
    rewritten after it), from bytes deflated once per run."""
    local, central = _deflated_zeros_records(name, n_bytes)
    blob = Path(npz_path).read_bytes()
    end = blob.rfind(_END_SIGNATURE)
    if blob[max(0, end - 20):end - 16] == b"PK\x06\x07":  # a zip64 end record: its counts and offsets live there
        raise ValueError(f"{npz_path} is a zip64 archive; add_deflated_zeros appends to plain zip files only")
    signature, disk, first_disk, on_disk, total, size, start, _ = _END_RECORD.unpack_from(blob, end)
    moved = bytearray(central)
    struct.pack_into("<I", moved, _CENTRAL_LOCAL_OFFSET, start)
    end_record = _END_RECORD.pack(signature, disk, first_disk, on_disk + 1, total + 1, size + len(moved),
                                  start + len(local), 0)
    Path(npz_path).write_bytes(blob[:start] + local + blob[start:start + size] + bytes(moved) + end_record)


def add_lying_header(npz_path, name: str, shape: tuple) -> None:
    """Append ``name.npy`` whose header claims ``shape`` (float64) over 8 bytes of data."""
    header = {"descr": "<f8", "fortran_order": False, "shape": shape}
    with zipfile.ZipFile(npz_path, "a") as archive:
        with archive.open(f"{name}.npy", "w") as member:
            np.lib.format.write_array_header_1_0(member, header)
            member.write(bytes(8))


def declare_size(npz_path, name: str, n_bytes: int) -> None:
    """Rewrite the size the central directory declares for ``name.npy`` (the data stays as it is)."""
    blob = bytearray(open(npz_path, "rb").read())
    with zipfile.ZipFile(npz_path) as archive:
        wanted = archive.getinfo(f"{name}.npy").filename.encode()
    position = 0
    while (position := blob.find(b"PK\x01\x02", position)) >= 0:
        name_length = struct.unpack_from("<H", blob, position + 28)[0]
        if bytes(blob[position + 46: position + 46 + name_length]) == wanted:
            struct.pack_into("<I", blob, position + _CENTRAL_SIZE_OFFSET, n_bytes)
            break
        position += 4
    else:
        raise LookupError(f"{name}.npy not found in the central directory of {npz_path}")
    open(npz_path, "wb").write(bytes(blob))
