"""Crafted ``.npz`` entries that would take far more memory than their file: for the size-limit tests."""

import struct
import zipfile

import numpy as np

# Offset of "uncompressed size" in a zip central directory record (after signature, versions, flags,
# method, time, date, crc and compressed size).
_CENTRAL_SIZE_OFFSET = 24


def add_deflated_zeros(npz_path, name: str, n_bytes: int) -> None:
    """Append ``name.npy``: a real float64 zero array of ``n_bytes`` bytes, deflated (about 1000:1)."""
    header = {"descr": "<f8", "fortran_order": False, "shape": (n_bytes // 8,)}
    block = bytes(1 << 20)
    with zipfile.ZipFile(npz_path, "a", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
            np.lib.format.write_array_header_1_0(member, header)
            for start in range(0, n_bytes - n_bytes % 8, len(block)):
                member.write(block[: min(len(block), n_bytes - n_bytes % 8 - start)])


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
