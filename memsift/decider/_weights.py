"""The weights file: a JSON header and raw arrays, loaded in well under a millisecond.

Layout: ``MSIFTW1\\n``, the header's length (4 bytes, little-endian), the JSON
header, then each array's bytes in the order the header lists them. Arrays are
``array.array`` typecodes: ``b`` (int8, with a scale), ``f`` (float32) or ``H``
(uint16). JSON weights took 35 to 130 ms to load here; this takes about 0.1 ms.
"""

from __future__ import annotations

import json
import struct
import sys
from array import array
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the hooks' hot path pays for each import
if TYPE_CHECKING:
    from typing import Any

MAGIC = b"MSIFTW1\n"
SHIPPED = Path(__file__).with_name("model.bin")  # the embedded decider's weights, in the package


def save(path: Path, header: dict[str, Any], arrays: dict[str, array[Any]]) -> None:
    listing = [{"name": name, "type": arr.typecode, "length": len(arr)} for name, arr in arrays.items()]
    head = json.dumps({**header, "arrays": listing}, sort_keys=True, separators=(",", ":")).encode()
    with open(path, "wb") as out:
        out.write(MAGIC + struct.pack("<I", len(head)) + head)
        for arr in arrays.values():
            out.write(_little_endian(arr).tobytes())


def load(path: Path) -> tuple[dict[str, Any], dict[str, array[Any]]]:
    data = path.read_bytes()
    if not data.startswith(MAGIC):
        raise ValueError(f"{path} is not a memsift weights file")
    (size,) = struct.unpack_from("<I", data, len(MAGIC))
    start = len(MAGIC) + 4
    header = json.loads(data[start:start + size])
    offset = start + size
    arrays: dict[str, array[Any]] = {}
    for spec in header["arrays"]:
        arr = array(spec["type"])
        end = offset + spec["length"] * arr.itemsize
        arr.frombytes(data[offset:end])
        arrays[spec["name"]] = _little_endian(arr)
        offset = end
    return header, arrays


def _little_endian(arr: array[Any]) -> array[Any]:
    """The file is little-endian whatever the machine (a swap is its own inverse)."""
    if sys.byteorder == "big" and arr.itemsize > 1:
        arr = array(arr.typecode, arr)
        arr.byteswap()
    return arr
