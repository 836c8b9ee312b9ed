"""What a received message becomes in custody, made without the database: the columns of its
letter (custody key, envelope, headers and properties as JSON text) and what storing it needs
to know beside them (its token, whether it is a redelivery, our replay id if it carries one).

It lives below Django and the adapters, so that a capture's reader process
(console.brokers.capture_process) makes the rows itself and hands the worker plain values:
unpickling a batch of decoded messages (nested tables, timestamps, envelopes) cost the worker
as much as preparing them did.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from console.letters.frameworks import enrich
from console.letters.values import escape_nul, to_json
from console.tracing.context import read_trace_context

if TYPE_CHECKING:
    from console.brokers.base import Received

#: The header a replay adds to each message it publishes (console.jobs.engines.publish): a letter
#: that comes back carrying it is a return of the letter with that replay id.
REPLAY_ID_HEADER = "x-dlo-replay-id"


class Arrival(NamedTuple):
    """A message's place in its batch, beside its letter's columns."""

    token: Any  # the capture session's handle to acknowledge it
    redelivered: bool
    replay_id: str  # our replay id header, "" when it carries none
    once: bool = False  # the broker names this death once (``Received.once``)


def prepared(batch: Iterable[Received], fixed: Mapping[str, Any]) -> tuple[list[Arrival], list[dict[str, Any]]]:
    """The arrivals of ``batch`` and their letters' columns; ``fixed`` holds the columns that
    are the same for the whole batch (its place, broker and capture job)."""
    arrivals, rows = [], []
    for message in batch:
        arrivals.append(Arrival(message.token, bool(message.redelivered), replay_id_of(message.headers),
                                bool(message.once)))
        rows.append(letter_row(message, fixed))
    return arrivals, rows


def replay_id_of(headers: Mapping[str, Any]) -> str:
    value = headers.get(REPLAY_ID_HEADER)
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).decode("utf-8", "replace")
    return str(value) if value else ""


def letter_row(message: Received, fixed: Mapping[str, Any]) -> dict[str, Any]:
    """The new letter's columns, as ``console.services.copy_insert`` writes them. Text from the
    message that PostgreSQL cannot hold (NUL) is escaped; headers and properties keep it
    exactly (tagged)."""
    headers_json = json.dumps(to_json(message.headers), sort_keys=True)
    properties_json = json.dumps(to_json(message.properties), sort_keys=True)
    env = enrich(message.envelope, message.headers)
    trace = read_trace_context(message.headers, message.properties, message.body)
    if trace is not None:
        env.trace_id, env.span_id = trace.trace_id, trace.span_id
    return {
        **fixed,
        "message_id": escape_nul(message.message_id)[:500],
        "custody_key": custody_key(message.message_id, properties_json, headers_json, message.body),
        "origin_address": escape_nul(env.origin_address)[:500],
        "origin_queue": escape_nul(env.origin_queue)[:500],
        "routing_key": escape_nul(env.routing_key)[:500],
        "reason": escape_nul(env.reason)[:50],
        "death_count": env.death_count,
        "first_failed_at": env.first_failed_at,
        "last_failed_at": env.last_failed_at,
        "exception_type": escape_nul(env.exception_type)[:500],
        "exception_message": escape_nul(env.exception_message),
        "exception_stack": escape_nul(env.exception_stack),
        "fingerprint": env.fingerprint(),
        "envelope_details": json.dumps(to_json(env.details)),
        "trace_id": env.trace_id,
        "span_id": env.span_id,
        "headers": headers_json,
        "properties": properties_json,
        "body": message.body,
        "body_size": len(message.body),
        "parent_id": None,
        "replay_count": 0,
        "quarantined_at": None,
        "quarantine_reason": "",
    }


def custody_key(message_id: str, properties_json: str, headers_json: str, body: bytes) -> str:
    """Same message, same key: id, properties, headers and body."""
    digest = hashlib.sha256()
    digest.update(message_id.encode("utf-8", "surrogatepass"))
    digest.update(properties_json.encode())
    digest.update(headers_json.encode())
    digest.update(body)
    return digest.hexdigest()
