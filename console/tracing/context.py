"""The trace context a dead letter carries: which distributed trace its failure belongs to.

Instrumented producers write it into the message, and a dead letter keeps it (RabbitMQ keeps
a rejected message's headers as published). Formats read, first found wins:

- W3C Trace Context: ``traceparent`` (and ``tracestate``): OpenTelemetry's default, also what
  opentelemetry-instrumentation-pika and -celery write (Celery: into the AMQP message headers,
  beside ``id`` and ``task``).
- B3 single header ``b3`` (``{trace}-{span}[-{sampled}[-{parent}]]``) and B3 multi
  (``X-B3-TraceId``, ``X-B3-SpanId``, ``X-B3-Sampled``, ``X-B3-Flags``): Zipkin, Brave, Istio.
- Jaeger's ``uber-trace-id`` (``{trace}:{span}:{parent}:{flags}``, ids of variable length,
  zero-padded on the left; ``%3A`` for ``:`` when it went through HTTP).
- Dramatiq (opentelemetry-instrumentor-dramatiq): a carrier of the formats above in the message
  body's options (``{"options": {"options": {"trace_context": {...}}}}``; ``options.trace_context``
  as well), since Dramatiq's messages have no headers of their own.

Header names are matched in lowercase (what the propagators write), UPPER, Title-Case and
B3's ``X-B3-TraceId`` spelling; values may be text, bytes or the console's stored JSON
tags (``{"$bytes": ...}``, console.letters.values), so the same reading serves a capture (raw
values) and a letter already in custody.

Headers are written by whoever published: attacker-controlled. Each format is parsed strictly
(lengths, lowercase hex where the format says so, all-zero ids refused, no ``int(x, 16)``,
which also reads ``0x``, ``+``, ``_`` and spaces) and nothing here raises on junk: a value that
does not parse is no trace context. Plain Python, no Django and no other package of the console
(console.letters.rows imports it): the capture's reader process reads every letter with it.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: Where a trace context was read from (``TraceContext.source``): a header's name, or the body.
BODY = "body"

TRACEPARENT = "traceparent"
TRACESTATE = "tracestate"
B3 = "b3"
B3_TRACE_ID = "x-b3-traceid"
B3_SPAN_ID = "x-b3-spanid"
B3_SAMPLED = "x-b3-sampled"
B3_FLAGS = "x-b3-flags"
UBER_TRACE_ID = "uber-trace-id"
#: Every header name read, lowercase: a header holding one of these carries trace context.
HEADER_NAMES = (TRACEPARENT, TRACESTATE, B3, B3_TRACE_ID, B3_SPAN_ID, B3_SAMPLED, B3_FLAGS, UBER_TRACE_ID)
#: The spellings of those names read: lowercase (what OpenTelemetry's propagators write), UPPER,
#: Title-Case, and B3's own (``X-B3-TraceId``). A name cased otherwise is not read.
_SPELLINGS = frozenset(
    spelling for name in HEADER_NAMES for spelling in (
        name, name.upper(), "-".join(part.capitalize() for part in name.split("-")),
        name.replace("x-b3-", "X-B3-").replace("traceid", "TraceId").replace("spanid", "SpanId")))

#: No header value longer than this is read (a traceparent is 55 characters; W3C asks that a
#: tracestate of 512 be kept).
MAX_VALUE = 512
#: A Dramatiq body is looked into only when it is at most this long and names ``trace_context``.
MAX_BODY = 64 * 1024
_BODY_MARK = b'"trace_context"'

_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-[\x21-\x7e]*)?")
_B3_TRACE = re.compile(r"[0-9a-fA-F]{16}|[0-9a-fA-F]{32}")
_B3_SPAN = re.compile(r"[0-9a-fA-F]{16}")
_B3_SAMPLED = {"0": False, "1": True, "d": True, "true": True, "false": False}
_JAEGER = re.compile(r"([0-9a-fA-F]{1,32}):([0-9a-fA-F]{1,16}):([0-9a-fA-F]{1,16}):([0-9a-fA-F]{1,2})")
# W3C tracestate list members: simple-key or tenant@system key, and a value of printable
# ASCII without ',' and '=' (not ending in a space).
_TRACESTATE_MEMBER = re.compile(
    r"(?:[a-z][a-z0-9_*/-]{0,255}|[a-z0-9][a-z0-9_*/-]{0,240}@[a-z][a-z0-9_*/-]{0,13})"
    r"=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]")
_HEX_ONLY = re.compile(r"[0-9a-f]+")
_ZERO_TRACE = "0" * 32
_ZERO_SPAN = "0" * 16


@dataclass(frozen=True)
class TraceContext:
    """A letter's trace context: ``trace_id`` 32 and ``span_id`` 16 lowercase hex digits, never
    all zero (the span is the one that published the message, the consumer's parent).
    ``sampled`` is None when the format left it open. ``source`` names the header it was read
    from (lowercase; ``x-b3-traceid`` for B3 multi) or ``body``; ``format`` is ``w3c``, ``b3``,
    ``b3multi`` or ``jaeger``. ``tracestate`` is W3C's, kept only when it is well formed."""

    trace_id: str
    span_id: str
    sampled: bool | None
    format: str
    source: str
    tracestate: str = ""


def read_trace_context(headers: Mapping[str, Any] | None, properties: Mapping[str, Any] | None = None,
                       body: bytes | None = None) -> TraceContext | None:
    """The trace context a message carries in its ``headers`` (then its ``properties``, where
    some transports put application headers, then a Dramatiq ``body``), or None. Never raises."""
    try:
        for carrier in (headers, properties):
            found = _from_carrier(carrier, "")
            if found is not None:
                return found
        if body is not None:
            return _from_dramatiq_body(body)
    except Exception:  # noqa: BLE001 - hostile content never stops a capture; junk is no context
        return None
    return None


def valid_trace_id(value: Any) -> bool:
    """Whether ``value`` is a trace id as the console stores it: 32 lowercase hex, not all zero."""
    return isinstance(value, str) and len(value) == 32 and value != _ZERO_TRACE and bool(_HEX_ONLY.fullmatch(value))


def valid_span_id(value: Any) -> bool:
    """Whether ``value`` is a span id as the console stores it: 16 lowercase hex, not all zero."""
    return isinstance(value, str) and len(value) == 16 and value != _ZERO_SPAN and bool(_HEX_ONLY.fullmatch(value))


def _from_carrier(carrier: Mapping[str, Any] | None, prefix: str) -> TraceContext | None:
    if not isinstance(carrier, Mapping) or not carrier:
        return None
    # A capture reads every letter's headers, most of which carry none of these: the names are
    # looked up as a set, in C, instead of lowering every name in Python.
    names = _SPELLINGS.intersection(carrier)
    if not names:
        return None
    found: dict[str, str] = {}
    for name in sorted(names):  # the same winner whatever the carrier's order
        lowered = name.lower()
        if lowered not in found:
            text = _text(carrier[name])
            if text is not None:
                found[lowered] = text
    return _w3c(found, prefix) or _b3_single(found, prefix) or _b3_multi(found, prefix) or _jaeger(found, prefix)


def _text(value: Any) -> str | None:
    """A header value as text: a string, ASCII bytes, or a stored ``$bytes``/``$str`` tag; a
    list (some carriers keep repeated headers) gives its first element. None for anything else."""
    if isinstance(value, (list, tuple)):
        value = value[0] if value else None
    if isinstance(value, dict) and len(value) == 1:
        (tag, inner), = value.items()
        if tag not in ("$bytes", "$str") or not isinstance(inner, str) or len(inner) > 4 * MAX_VALUE:
            return None
        try:
            value = base64.b64decode(inner, validate=True)
        except (binascii.Error, ValueError):
            return None
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        if len(raw) > MAX_VALUE or not raw.isascii():
            return None
        value = raw.decode("ascii")
    if not isinstance(value, str) or len(value) > MAX_VALUE:
        return None
    return value


def _w3c(found: dict[str, str], prefix: str) -> TraceContext | None:
    value = found.get(TRACEPARENT)
    if value is None:
        return None
    match = _TRACEPARENT.fullmatch(value.strip(" \t"))
    if match is None:
        return None
    version, trace_id, span_id, flags, rest = match.groups()
    # Version ff is forbidden; version 00 has exactly four fields; a later version may add
    # fields after a '-', which a reader of 00 ignores.
    if version == "ff" or (version == "00" and rest is not None):
        return None
    if trace_id == _ZERO_TRACE or span_id == _ZERO_SPAN:
        return None
    return TraceContext(trace_id, span_id, bool(int(flags, 16) & 1), "w3c", prefix + TRACEPARENT,
                        _tracestate(found.get(TRACESTATE, "")))


def _tracestate(value: str) -> str:
    """``value`` when it is a well-formed tracestate (at most 32 members, keys once), else ""."""
    members = [member.strip(" \t") for member in value.split(",")]
    members = [member for member in members if member]
    if not members or len(members) > 32:
        return ""
    keys = set()
    for member in members:
        if not _TRACESTATE_MEMBER.fullmatch(member):
            return ""
        key = member.split("=", 1)[0]
        if key in keys:
            return ""
        keys.add(key)
    return ",".join(members)


def _b3_ids(trace_id: str, span_id: str) -> tuple[str, str] | None:
    """B3's ids, lowercase, a 64-bit trace id padded to 128 bits as OpenTelemetry does; None
    when either is malformed or all zero."""
    if not _B3_TRACE.fullmatch(trace_id) or not _B3_SPAN.fullmatch(span_id):
        return None
    trace_id, span_id = trace_id.lower().rjust(32, "0"), span_id.lower()
    if trace_id == _ZERO_TRACE or span_id == _ZERO_SPAN:
        return None
    return trace_id, span_id


def _b3_single(found: dict[str, str], prefix: str) -> TraceContext | None:
    value = found.get(B3)
    if value is None:
        return None
    fields = value.strip(" \t").split("-")
    if len(fields) < 2 or len(fields) > 4:  # a lone sampling decision ("0", "d") names no trace
        return None
    ids = _b3_ids(fields[0], fields[1])
    if ids is None:
        return None
    sampled = None
    if len(fields) >= 3:
        if fields[2] not in ("0", "1", "d"):
            return None
        sampled = fields[2] != "0"
    if len(fields) == 4 and _b3_ids(fields[0], fields[3]) is None:
        return None  # a parent span id that is not one makes the whole header suspect
    return TraceContext(*ids, sampled, "b3", prefix + B3)


def _b3_multi(found: dict[str, str], prefix: str) -> TraceContext | None:
    trace_id, span_id = found.get(B3_TRACE_ID), found.get(B3_SPAN_ID)
    if trace_id is None or span_id is None:
        return None
    ids = _b3_ids(trace_id.strip(" \t"), span_id.strip(" \t"))
    if ids is None:
        return None
    sampled = _B3_SAMPLED.get(found.get(B3_SAMPLED, "").strip(" \t").lower())
    if found.get(B3_FLAGS, "").strip(" \t") == "1":  # debug implies sampled
        sampled = True
    return TraceContext(*ids, sampled, "b3multi", prefix + B3_TRACE_ID)


def _jaeger(found: dict[str, str], prefix: str) -> TraceContext | None:
    value = found.get(UBER_TRACE_ID)
    if value is None:
        return None
    value = value.strip(" \t")
    if "%" in value:
        value = value.replace("%3A", ":").replace("%3a", ":")
    match = _JAEGER.fullmatch(value)
    if match is None:
        return None
    trace_id, span_id, _parent, flags = match.groups()
    trace_id, span_id = trace_id.lower().rjust(32, "0"), span_id.lower().rjust(16, "0")
    if trace_id == _ZERO_TRACE or span_id == _ZERO_SPAN:
        return None
    return TraceContext(trace_id, span_id, bool(int(flags, 16) & 1), "jaeger", prefix + UBER_TRACE_ID)


def _from_dramatiq_body(body: bytes) -> TraceContext | None:
    """Dramatiq's message is JSON; opentelemetry-instrumentor-dramatiq puts its carrier in the
    options (nested once more, as Actor.message_with_options receives ``options=``)."""
    raw = body if type(body) is bytes else bytes(body)
    if len(raw) > MAX_BODY or _BODY_MARK not in raw or raw.lstrip()[:1] != b"{":
        return None
    try:
        # Bounded by MAX_BODY; a document nested too deep for the decoder is RecursionError.
        # (Not console.letters.bounded_json: this package imports nothing of the console's.)
        message = json.loads(raw)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError too
        return None
    if not isinstance(message, dict):
        return None
    options = message.get("options")
    for holder in (options, options.get("options") if isinstance(options, dict) else None):
        if isinstance(holder, dict):
            found = _from_carrier(holder.get("trace_context"), BODY + ":")
            if found is not None:
                return found
    return None
