"""The formats letters' bodies are written in, beyond JSON and text: one module per format
(console.decoders.base says what each declares), registered below by dotted path
(console.kinds). Adding a format is a module here and a line below (or :func:`register`, for a
format that lives elsewhere, a test's own): the letter page shows its bodies read, the search
finds their values, masks apply to them and the API gives them as ``decoded``.

:func:`read` decides which format a letter's body is in and reads it
(console.decoders.reading).
"""

from __future__ import annotations

from console.decoders.base import BodyFormat
from console.kinds import Kinds, instance

#: format name -> dotted path of its BodyFormat class.
KINDS: Kinds[BodyFormat] = Kinds("body format", {
    "msgpack": "console.decoders.msgpack.MessagePack",
    "cbor": "console.decoders.cbor.Cbor",
    "pickle": "console.decoders.pickle.Pickle",
    "xml": "console.decoders.xml.Xml",
    "protobuf": "console.decoders.protobuf.Protobuf",
    "avro": "console.decoders.avro.Avro",
}, make=instance)


def register(name: str, dotted: str) -> None:
    """Add the format whose BodyFormat class ``dotted`` names, under ``name``."""
    KINDS.register(name, dotted)


def unregister(name: str) -> None:
    KINDS.unregister(name)
