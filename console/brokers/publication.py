"""A letter in custody as a replay publishes it: plain values (its headers and properties as
the JSON text custody keeps), made into the broker's message only where it is published, so
that a replay's publisher process (console.brokers.publish_process) is handed strings and
bytes, cheap to pickle, and decodes the JSON itself. The trace context it carries is set here,
by DLO_REPLAY_TRACE (console.tracing.replay)."""

from __future__ import annotations

import json
from typing import NamedTuple

from console.brokers.base import Outgoing
from console.letters.rows import REPLAY_ID_HEADER
from console.letters.values import from_json
from console.tracing.replay import replay_headers


class Publication(NamedTuple):
    key: int  # the letter's id
    destination: str
    scope: str
    body: bytes
    headers_json: str  # tagged JSON (console.letters.values), as custody keeps it
    properties_json: str
    replay_id: str
    # The console's replay span for this letter, as a W3C traceparent, when its telemetry is on
    # (console.tracing.telemetry); empty, a link-mode replay makes random ids.
    traceparent: str = ""


def to_outgoing(publication: Publication) -> Outgoing:
    """The message every replay publishes: the letter's headers and properties as the broker
    gave them (their trace context as DLO_REPLAY_TRACE says), plus the replay id a consumer
    can drop duplicates by."""
    headers = replay_headers(from_json(json.loads(publication.headers_json or "{}")), publication.traceparent)
    return Outgoing(key=publication.key, destination=publication.destination, scope=publication.scope,
                    body=publication.body, headers={**headers, REPLAY_ID_HEADER: publication.replay_id},
                    properties=from_json(json.loads(publication.properties_json or "{}")))
