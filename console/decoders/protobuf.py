"""Protobuf (``protobuf``), read with the descriptor sets an admin uploaded
(``protoc --descriptor_set_out``, ``buf build -o``; console.services.body_schemas keeps them).

The message's type comes from what the letter says: the content type's ``messageType`` (or
``proto``) parameter, or a ``proto-message-type`` header (``x-protobuf-message-type`` and
``message-type`` too). The descriptor sets are parsed once into a pool, again only when the
uploads change (console.decoders.schemas). Parsing is the library's: bounded nesting (its
recursion limit), no code run. An edited value is written back as the same type.
"""

from __future__ import annotations

import logging
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
from google.protobuf.message import DecodeError, Message

from console.decoders import schemas
from console.decoders.base import BodyFormat, Said, Unreadable, Unwritable, bounded, unbounded
from console.refusals import Refusal

log = logging.getLogger(__name__)

#: Header names that may name the message type, lower case.
TYPE_HEADERS = ("proto-message-type", "x-protobuf-message-type", "message-type")
#: Content type parameters that may name it.
TYPE_PARAMETERS = ("messagetype", "proto", "type")


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
    return schemas.parsed("protobuf", _built)


def _built(uploads: list[schemas.Upload]) -> descriptor_pool.DescriptorPool:
    made, added = descriptor_pool.DescriptorPool(), set[str]()
    for upload in uploads:
        try:
            add_set(made, upload.data, added)
        except DescriptorSetError as exc:  # checked alone when uploaded; beside the others it may clash
            log.warning("the descriptor set %r is left out: %s", upload.name, exc)
    return made


def message_type(said: Said) -> str:
    """The message type a letter names, or ""."""
    for name in TYPE_PARAMETERS:
        if said.parameters.get(name):
            return said.parameters[name]
    for name, value in said.headers.items():
        if str(name).lower() in TYPE_HEADERS and isinstance(value, str) and value:
            return value
    return said.message_type  # an admin's mapping


class Protobuf(BodyFormat):
    label = "Protobuf"
    content_types = ("application/x-protobuf", "application/protobuf", "application/vnd.google.protobuf")
    writes = True

    def read(self, body: bytes, said: Said) -> Any:
        name, message = _message(said, Unreadable)
        try:
            message.ParseFromString(body)
        except (DecodeError, RecursionError, ValueError) as exc:
            raise Unreadable(f"not a {name}: {exc}") from None
        return bounded(json_format.MessageToDict(message, preserving_proto_field_name=True))

    def declares(self, upload: bytes) -> list[str]:
        return declared(upload)

    def write(self, value: Any, like: bytes, said: Said) -> bytes:
        """The edited value as the letter's message type, checked by its descriptor: a field the
        type does not have, or a value of the wrong type, is refused naming the field."""
        name, message = _message(said, Unwritable)
        try:
            json_format.ParseDict(unbounded(value), message)
        except (json_format.ParseError, TypeError, ValueError, RecursionError) as exc:
            raise Unwritable(f"the edit is not a {name}: {exc}") from None
        return bytes(message.SerializeToString())


def _message(said: Said, refused: type[Exception]) -> tuple[str, Message]:
    """The letter's message type and an empty message of it (``refused`` when it names none, or
    none the uploads have)."""
    name = message_type(said)
    if not name:
        raise refused("no message type named (content type messageType=…, or a proto-message-type header)")
    try:
        descriptor = pool().FindMessageTypeByName(name.removeprefix("type.googleapis.com/"))
    except KeyError:
        raise refused(f"no uploaded descriptor set has the message type {name}") from None
    return name, message_factory.GetMessageClass(descriptor)()
