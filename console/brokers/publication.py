"""A letter in custody as a replay publishes it: plain values (its headers and properties as
the JSON text custody keeps), made into the broker's message only where it is published, so
that a replay's publisher process (console.brokers.publish_process) is handed strings and
bytes, cheap to pickle, and decodes the JSON itself."""

from __future__ import annotations

import json
from typing import NamedTuple

from console.brokers.base import Outgoing
from console.brokers.letter_rows import REPLAY_ID_HEADER
from console.brokers.values import from_json


class Publication(NamedTuple):
    key: int  # the letter's id
    destination: str
    scope: str
    body: bytes
    headers_json: str  # tagged JSON (console.brokers.values), as custody keeps it
    properties_json: str
    replay_id: str


def to_outgoing(publication: Publication) -> Outgoing:
    """The message every replay publishes: the letter's headers and properties as the broker
    gave them, plus the replay id a consumer can drop duplicates by."""
    headers = from_json(json.loads(publication.headers_json or "{}"))
    return Outgoing(key=publication.key, destination=publication.destination, scope=publication.scope,
                    body=publication.body, headers={**headers, REPLAY_ID_HEADER: publication.replay_id},
                    properties=from_json(json.loads(publication.properties_json or "{}")))
