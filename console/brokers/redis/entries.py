"""Stream entries <-> the values that cross the adapter boundary.

A stream entry is an ordered list of field/value pairs. The first of the body fields
(``body``, ``payload``, ``data`` by default) becomes the letter's body, byte for byte; every
other field becomes a header (text where it is UTF-8, bytes otherwise). An entry without a
body field has an empty body and all its fields as headers: nothing is invented, so a replay
writes back exactly the fields that were read. ``properties`` record how to put the entry
together again: the field order, which field was the body, and where the entry was read.

Duplicate field names within one entry (Redis allows them) keep only the last value: redis-py
reads an entry into a dict.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, cast

from redis.typing import StreamRangeResponse

from console.brokers.base import Outgoing, Received
from console.letters.envelope import FailureEnvelope
from console.letters.values import escape_nul, storable

#: Fields the common dead-stream pattern adds to the original entry's fields.
DEAD_LETTER_FIELDS = ("orig_stream", "orig_id", "group", "error", "deliveries")
EXCEPTION_TYPE_FIELDS = ("error_type", "exception_type")

PENDING = "pending"
DEAD_STREAM = "dead_stream"


#: A stream entry as this adapter's clients read it: its id and its fields, all bytes
#: (console.brokers.redis.connection opens every client with decode_responses off).
Entry = tuple[bytes, dict[bytes, bytes]]


def stream_entries(reply: StreamRangeResponse | None) -> list[Entry]:
    """XRANGE's reply as our clients get it. redis-py types it for every client at once (str
    for a client that decodes, None for a pipeline's), so this says which one ours is."""
    return cast("list[Entry]", reply)


def text(raw: bytes | str) -> str:
    return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw


def value_of(raw: bytes) -> str | bytes:
    """Text when the bytes are UTF-8, else the bytes themselves."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw


def id_time(entry_id: str) -> datetime | None:
    """The millisecond time in an entry id (``1700000000000-0``); None for hand-made ids like ``1-1``."""
    try:
        millis = int(entry_id.split("-", 1)[0])
    except ValueError:
        return None
    if millis < 10**11:  # before 1973: an explicit id, not a clock
        return None
    return datetime.fromtimestamp(millis / 1000, tz=UTC)


def _layout(fields: dict[bytes, bytes], body_fields: tuple[str, ...]) -> tuple[bytes, dict[str, Any], dict[str, Any]]:
    """Split an entry into body, headers and the properties that rebuild it."""
    names: list[str] = []
    raw_names: dict[str, bytes] = {}
    headers: dict[str, Any] = {}
    by_name: dict[str, bytes] = {}
    for raw_name, raw_value in fields.items():
        try:
            name = raw_name.decode("utf-8")
        except UnicodeDecodeError:
            name = None
        if name is None or not storable(name):
            # A stand-in the database can store; the raw name is kept to write it back.
            name = escape_nul(raw_name.decode("utf-8", "backslashreplace"))
            raw_names[name] = raw_name
        names.append(name)
        by_name[name] = raw_value
    body_field = next((f for f in body_fields if f in by_name), "")
    for name in names:
        if name != body_field:
            headers[name] = value_of(by_name[name])
    properties: dict[str, Any] = {"fields": names, "body_field": body_field}
    if raw_names:
        properties["raw_field_names"] = raw_names
    body = by_name[body_field] if body_field else b""
    return body, headers, properties


def pending_received(
    stream: str, group: str, entry_id: str, fields: dict[bytes, bytes], pending: dict[str, Any],
    body_fields: tuple[str, ...],
) -> Received:
    """A pending entry delivered too often, as a letter whose origin is its stream.

    ``pending`` is the entry's XPENDING row (owner, idle time, delivery count).
    """
    body, headers, properties = _layout(fields, body_fields)
    properties.update(source=PENDING, stream=stream, group=group, entry_id=entry_id)
    idle = timedelta(milliseconds=int(pending["time_since_delivered"]))
    envelope = FailureEnvelope(
        origin_address=stream,
        origin_queue=stream,
        reason="max_deliver",
        death_count=int(pending["times_delivered"]),
        last_failed_at=datetime.now(UTC) - idle,
        details={"group": group, "consumer": text(pending["consumer"]), "entry_id": entry_id,
                 "published_at": _iso(id_time(entry_id))},
    )
    return Received(
        token=entry_id, body=body, headers=headers, properties=properties, envelope=envelope,
        # Always true: a copy committed by a capture that died before its XACK is matched, not
        # stored again (custody looks for one only when this flag is set).
        redelivered=True, message_id=f"{stream}:{entry_id}",
    )


def dead_stream_received(stream: str, entry_id: str, fields: dict[bytes, bytes],
                         body_fields: tuple[str, ...]) -> Received:
    """An entry of a dead stream; the pattern's fields (orig_stream, ...) make its envelope."""
    body, headers, properties = _layout(fields, body_fields)
    added = [name for name in DEAD_LETTER_FIELDS if name in headers]
    properties.update(source=DEAD_STREAM, stream=stream, entry_id=entry_id, dead_letter_fields=added)
    origin = text(headers.get("orig_stream", ""))
    orig_id = text(headers.get("orig_id", ""))
    try:
        deliveries = int(text(headers.get("deliveries", "")))
    except ValueError:
        deliveries = 0
    exception_type = next((text(headers[f]) for f in EXCEPTION_TYPE_FIELDS if f in headers), "")
    envelope = FailureEnvelope(
        origin_address=origin,
        origin_queue=origin,
        reason="max_deliver" if deliveries else "rejected",
        death_count=deliveries or 1,
        last_failed_at=id_time(entry_id),
        exception_type=exception_type,
        exception_message=text(headers.get("error", "")),
        details={"group": text(headers.get("group", "")), "orig_id": orig_id,
                 "published_at": _iso(id_time(orig_id)), "dead_stream": stream},
    )
    return Received(
        token=entry_id, body=body, headers=headers, properties=properties, envelope=envelope,
        redelivered=True, message_id=f"{stream}:{entry_id}",
    )


def _iso(moment: datetime | None) -> str:
    return moment.isoformat() if moment else ""


def _encode(value: Any) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if value is None:
        return b""
    if isinstance(value, bool):
        return b"1" if value else b"0"
    return str(value).encode("utf-8", "surrogatepass")


def outgoing_fields(out: Outgoing) -> list[bytes]:
    """Field/value pairs (flat) to XADD: the entry as read, in its order, plus new headers.

    The dead-stream pattern's own fields are left out, so the origin's consumer gets the
    message as it was first published (the letter in custody keeps them).
    """
    props = out.properties
    skip = set(props.get("dead_letter_fields") or ())
    raw_names: dict[str, bytes] = props.get("raw_field_names") or {}
    body_field = props.get("body_field") or ""
    headers = {name: value for name, value in out.headers.items() if name not in skip}
    pairs: list[tuple[str, Any]] = []
    for name in props.get("fields") or ():
        if name == body_field:
            pairs.append((name, out.body))
        elif name in headers:
            pairs.append((name, headers.pop(name)))
    pairs.extend(headers.items())  # the replay id, and anything added since the capture
    if not body_field and out.body:
        pairs.append(("body", out.body))
    if not pairs:
        pairs.append(("body", b""))  # XADD needs one field
    flat: list[bytes] = []
    for name, value in pairs:
        flat.append(raw_names.get(name) or name.encode("utf-8", "surrogatepass"))
        flat.append(_encode(value))
    return flat
