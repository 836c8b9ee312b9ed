"""Python pickles (Celery's ``application/x-python-serialize``): never unpickled. Loading a
pickle runs whatever its ``__reduce__`` names; the console shows what the pickle would do
instead, as ``pickletools`` reads it: the classes and functions it would load and its opcodes."""

from __future__ import annotations

import io
import pickletools
from typing import Any

from console.decoders.base import BodyFormat, Said, Unreadable

#: The disassembly is cut after this many lines, and the walk after this many opcodes.
MAX_LINES = 2000
MAX_OPCODES = 100_000


class Pickle(BodyFormat):
    label = "Python pickle"
    content_types = ("application/x-python-serialize", "application/python-pickle")
    magic = (b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05")  # the PROTO opcode, protocols 2 to 5
    unsafe = True

    def read(self, body: bytes, said: Said) -> Any:
        loads: list[str] = []
        lines: list[str] = []
        strings: list[str] = []
        try:
            for count, (opcode, argument, position) in enumerate(pickletools.genops(io.BytesIO(body))):
                if count == MAX_OPCODES:
                    lines.append(f"… cut after {MAX_OPCODES} opcodes")
                    break
                if len(lines) < MAX_LINES:
                    shown = "" if argument is None else " " + repr(argument)[:200]
                    lines.append(f"{position:>6}: {opcode.name}{shown}")
                if opcode.name == "GLOBAL" and isinstance(argument, str):
                    loads.append(argument.replace(" ", "."))
                elif opcode.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE") and isinstance(argument, str):
                    strings.append(argument)
                elif opcode.name == "STACK_GLOBAL" and len(strings) >= 2:
                    loads.append(f"{strings[-2]}.{strings[-1]}")
        except (ValueError, EOFError) as exc:
            raise Unreadable(f"not a pickle: {exc}") from None
        if len(lines) > MAX_LINES:
            lines[MAX_LINES - 1:] = [f"… cut after {MAX_LINES - 1} lines"]
        return {"unsafe": "a pickle runs code when loaded: the console never loads it",
                "would_load": sorted(set(loads)), "disassembly": lines}
