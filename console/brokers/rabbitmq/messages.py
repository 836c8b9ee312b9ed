"""AMQP 0-9-1 basic properties <-> the plain dicts that cross the adapter boundary.

Only properties that are set appear in the dict, under these names (``type`` is AMQP's
``message_type``). Header values stay as the client decodes them (bytes, datetimes, decimals,
nested tables); byte arrays become ``bytes`` so that equal values compare equal.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from pamqp.commands import Basic

#: Our name -> pamqp's attribute name.
PROPERTY_NAMES = {
    "content_type": "content_type",
    "content_encoding": "content_encoding",
    "delivery_mode": "delivery_mode",
    "priority": "priority",
    "correlation_id": "correlation_id",
    "reply_to": "reply_to",
    "expiration": "expiration",
    "message_id": "message_id",
    "timestamp": "timestamp",
    "type": "message_type",
    "user_id": "user_id",
    "app_id": "app_id",
}


def decode_properties(properties: Basic.Properties) -> tuple[dict[str, Any], dict[str, Any]]:
    """(properties, headers) of a delivered message."""
    decoded = {}
    for name, attribute in PROPERTY_NAMES.items():
        value = getattr(properties, attribute, None)
        if value is not None:
            decoded[name] = plain(value)
    return decoded, plain(dict(properties.headers or {}))


def encode_properties(properties: Mapping[str, Any], headers: Mapping[str, Any]) -> Basic.Properties:
    """Basic properties for a message to publish, exactly as given.

    Timestamps may be datetimes or AMQP seconds; an expiration may be a number of milliseconds.
    """
    unknown = set(properties) - set(PROPERTY_NAMES)
    if unknown:
        raise ValueError(f"unknown AMQP properties: {', '.join(sorted(unknown))}")
    values: dict[str, Any] = {}
    for name, value in properties.items():
        if value is None:
            continue
        if name == "timestamp" and isinstance(value, (int, float)):
            value = datetime.fromtimestamp(value, tz=UTC)
        elif name == "expiration":
            value = str(value)
        values[PROPERTY_NAMES[name]] = value
    return Basic.Properties(headers=table(headers) if headers else None, **values)


def plain(value: Any) -> Any:
    """Decoded AMQP values with byte arrays as bytes, recursively."""
    kind = type(value)  # the exact types pamqp decodes to first: this runs on every delivery
    if kind is str or kind is int or value is None or kind is bool:
        return value
    if kind is dict:
        return {k if type(k) is str else str(k): plain(v) for k, v in value.items()}
    if kind is list:
        return [plain(v) for v in value]
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


#: Exact types a header table keeps as they are (subclasses take the longer way).
_AS_THEY_ARE = frozenset({datetime, float, Decimal, bytearray})


def table(value: Mapping[str, Any]) -> dict[str, Any]:
    """A header table pamqp can encode: bytes as byte arrays (pamqp encodes only
    ``bytearray``), tuples as arrays, everything else as it is.

    pamqp writes every float as a 32-bit ``f``, so a 64-bit ``d`` header comes back rounded.
    """
    def fix(item: Any) -> Any:
        kind = type(item)  # the exact types from_json gives first: this runs on every publish
        if kind is str or kind is int or item is None or kind is bool:
            return item
        if kind is dict:
            return {k if type(k) is str else str(k): fix(v) for k, v in item.items()}
        if kind is list:
            return [fix(v) for v in item]
        if kind is bytes:
            return bytearray(item)
        if kind in _AS_THEY_ARE:
            return item
        if isinstance(item, Mapping):
            return {str(k): fix(v) for k, v in item.items()}
        if isinstance(item, (list, tuple)):
            return [fix(v) for v in item]
        if isinstance(item, (bytes, memoryview)):
            return bytearray(item)
        return item

    fixed: dict[str, Any] = fix(value)  # a mapping comes back a dict
    return fixed
