"""How long reading a hostile body takes, per format (console.decoders), against reading a
well-formed body of about the same size in the same format in the same run: deep nesting, huge
declared lengths, entity expansion, truncation, each at the 1 MiB the readers take at most.

    .venv/bin/python benchmarks/hostile_bodies.py [--repeat 5]

Prints, per body, the slowest of ``--repeat`` reads in milliseconds, what the reader said, and
the ratio to the well-formed baseline. No database, no Django: the readers are plain code.
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cbor2  # noqa: E402
import msgpack  # noqa: E402

from console.decoders.base import MAX_BYTES  # noqa: E402
from console.decoders.reading import read  # noqa: E402

SIZE = MAX_BYTES - 64
WELL_FORMED = {
    "application/x-msgpack": msgpack.packb([{"order": n, "sku": "gift-wrap"} for n in range(SIZE // 28)]),
    "application/cbor": cbor2.dumps([{"order": n, "sku": "gift-wrap"} for n in range(SIZE // 28)]),
    "application/x-python-serialize": pickle.dumps([{"order": n, "sku": "gift-wrap"} for n in range(SIZE // 30)]),
    "application/xml": b"<orders>" + b"<o><n>1</n><sku>gift-wrap</sku></o>" * (SIZE // 40) + b"</orders>",
}
HOSTILE = {
    "msgpack: deep nesting": (b"\x91" * SIZE, "application/x-msgpack"),
    "msgpack: declared 4G array": (b"\xdd\xff\xff\xff\xff", "application/x-msgpack"),
    "msgpack: declared 4G string": (b"\xdb\xff\xff\xff\xff" + b"x" * 10, "application/x-msgpack"),
    "cbor: deep nesting": (b"\x81" * SIZE + b"\x00", "application/cbor"),
    "cbor: declared 2^64 array": (b"\x9b\xff\xff\xff\xff\xff\xff\xff\xff", "application/cbor"),
    "cbor: declared 64G bytes": (b"\x5b\x00\x00\x00\x10\x00\x00\x00\x00", "application/cbor"),
    "cbor: indefinite map of maps": (b"\xbf" * SIZE, "application/cbor"),
    "pickle: truncated": (WELL_FORMED["application/x-python-serialize"][:-3], "application/x-python-serialize"),
    "pickle: a million opcodes": (b"\x80\x04" + b"N0" * (SIZE // 2) + b".", "application/x-python-serialize"),
    "xml: billion laughs": (b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">'
                            + b"".join(b'<!ENTITY a%d "%s">' % (n, b"&a;" * 10) for n in range(10))
                            + b"]><l>&a9;</l>", "application/xml"),
    "xml: deep nesting": (b"<a>" * (SIZE // 8) + b"</a>" * (SIZE // 8), "application/xml"),
    "xml: external entity": (b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
                             b"<x>&e;</x>", "application/xml"),
}


def slowest(body: bytes, content_type: str, repeat: int) -> tuple[float, str]:
    said, times = "", []
    for _ in range(repeat):
        started = time.perf_counter()
        reading = read(body, {"content_type": content_type}, {})
        times.append(time.perf_counter() - started)
        said = "read" if reading is not None and reading.text is not None else (reading.error if reading else "-")
    return max(times) * 1000, said


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    baselines = {content_type: slowest(body, content_type, args.repeat)[0]
                 for content_type, body in WELL_FORMED.items()}
    print(f"{'body':32s} {'bytes':>9s} {'slowest ms':>11s} {'baseline ms':>12s} {'ratio':>6s}  said")
    for content_type, body in WELL_FORMED.items():
        print(f"{'well-formed ' + content_type.split('/')[1]:32s} {len(body):9,d} {baselines[content_type]:11.1f}")
    for name, (body, content_type) in HOSTILE.items():
        took, said = slowest(body, content_type, args.repeat)
        base = baselines[content_type]
        print(f"{name:32s} {len(body):9,d} {took:11.1f} {base:12.1f} {took / base:6.2f}  {said[:60]}")


if __name__ == "__main__":
    main()
