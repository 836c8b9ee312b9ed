"""A body format only the tests register (tests/decoders/test_a_new_format_is_one_room.py): text
in ROT13, ``application/x-rot13``, read as ``{"plain": ...}``. No file under console/ names it."""

from __future__ import annotations

import codecs
from typing import Any

from console.decoders.base import BodyFormat, Said, Unreadable


class Rot13(BodyFormat):
    label = "ROT13"
    content_types = ("application/x-rot13",)

    def read(self, body: bytes, said: Said) -> Any:
        try:
            return {"plain": codecs.decode(body.decode("ascii"), "rot13")}
        except UnicodeDecodeError:
            raise Unreadable("not ASCII") from None
