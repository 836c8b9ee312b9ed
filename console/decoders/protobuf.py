"""Protobuf (``protobuf``), read with the descriptor sets an admin uploaded
(``protoc --descriptor_set_out``, ``buf build -o``; console.services.body_schemas keeps them).

The message's type comes from what the letter says: the content type's ``messageType`` (or
``proto``) parameter, or a ``proto-message-type`` header (``x-protobuf-message-type`` and
``message-type`` too). The descriptor sets are parsed once into a pool, again only when the
uploads change. Parsing is the library's: bounded nesting (its recursion limit), no code run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
from google.protobuf.message import DecodeError

from console.decoders.base import BodyFormat, Said, Unreadable, bounded
from console.refusals import Refusal

#: Header names that may name the message type, lower case.
TYPE_HEADERS = ("proto-message-type", "x-protobuf-message-type", "message-type")
#: Content type parameters that may name it.
TYPE_PARAMETERS = ("messagetype", "proto", "type")

#: The uploaded descriptor sets (serialized), and a key that changes when they do. Set by
#: console.services.body_schemas once Django is ready (this layer reads no database).
def _none() -> list[bytes]:
    return []


def _no_key() -> str:
    return ""


descriptor_sets: Callable[[], list[bytes]] = _none
descriptor_sets_key: Callable[[], str] = _no_key

_lock = threading.Lock()
_pool: tuple[str, descriptor_pool.DescriptorPool] | None = None


class DescriptorSetError(Refusal):
    """A descriptor set that does not parse or whose files do not build: why."""


def add_set(to: descriptor_pool.DescriptorPool, data: bytes, added: set[str]) -> list[str]:
    """Add the files of the serialized FileDescriptorSet ``data`` not in ``added`` yet (their
    names are added to it) to the pool ``to``; the message types they declare.
    DescriptorSetError when it does not parse, or a file does not build."""
    try:
        files = descriptor_pb2.FileDescriptorSet.FromString(data).file
    except DecodeError as exc:
        raise DescriptorSetError(f"not a Protobuf descriptor set (protoc --descriptor_set_out): {exc}") from None
    types: list[str] = []
    for file in files:
        if file.name in added:
            continue
        try:
            to.Add(file)
        except (TypeError, KeyError, ValueError) as exc:
            raise DescriptorSetError(f"{file.name} does not build (its imports must be in the set: protoc "
                                     f"--include_imports): {exc}") from None
        added.add(file.name)
        types.extend(f"{file.package}.{message.name}" if file.package else message.name
                     for message in file.message_type)
    return types


def declared(data: bytes) -> list[str]:
    """The message types a serialized FileDescriptorSet declares, checked by building its files
    (DescriptorSetError saying why they do not build, or that it holds none)."""
    names: set[str] = set()
    types = add_set(descriptor_pool.DescriptorPool(), data, names)
    if not names:
        raise DescriptorSetError("the descriptor set holds no file")
    return sorted(types)


def pool() -> descriptor_pool.DescriptorPool:
    """The message types of every uploaded descriptor set, parsed once per change of them."""
    global _pool
    key = descriptor_sets_key()
    with _lock:
        if _pool is None or _pool[0] != key:
            made, added = descriptor_pool.DescriptorPool(), set[str]()
            for data in descriptor_sets():
                add_set(made, data, added)
            _pool = (key, made)
        return _pool[1]


def message_type(said: Said) -> str:
    """The message type a letter names, or ""."""
    for name in TYPE_PARAMETERS:
        if said.parameters.get(name):
            return said.parameters[name]
    for name, value in said.headers.items():
        if str(name).lower() in TYPE_HEADERS and isinstance(value, str) and value:
            return value
    return ""


class Protobuf(BodyFormat):
    label = "Protobuf"
    content_types = ("application/x-protobuf", "application/protobuf", "application/vnd.google.protobuf")

    def read(self, body: bytes, said: Said) -> Any:
        name = message_type(said)
        if not name:
            raise Unreadable("no message type named (content type messageType=…, or a proto-message-type header)")
        try:
            descriptor = pool().FindMessageTypeByName(name.removeprefix("type.googleapis.com/"))
        except KeyError:
            raise Unreadable(f"no uploaded descriptor set has the message type {name}") from None
        message = message_factory.GetMessageClass(descriptor)()
        try:
            message.ParseFromString(body)
        except (DecodeError, RecursionError, ValueError) as exc:
            raise Unreadable(f"not a {name}: {exc}") from None
        return bounded(json_format.MessageToDict(message, preserving_proto_field_name=True))
