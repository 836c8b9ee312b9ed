"""Letters another console exported (JSON Lines, console.services.letter_export) taken into
custody here: into a place of kind ``imported`` on a broker the admin picks, from which they are
browsed, grouped and replayed like any others (the replay publishes their original bytes and
headers to their origin on that broker, staging's RabbitMQ say).

Read line by line, never whole: the first line must be the export's meta (who exported what,
when); each letter's line is checked, and a bad one is reported with its number while the rest
goes in. Letters a masked reader exported are not what was sent: they are marked so
(``envelope_details.imported.masked``) and quarantined, and a replay refuses them until an
admin releases them (console.services.safeguards.do_release). The import is audited with the
file's SHA-256 and its exporter.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from decimal import InvalidOperation
from typing import Any

from django.db import transaction
from django.utils import timezone

from console.access.actors import Actor
from console.access.scope import scope_of
from console.brokers import Received
from console.letters.envelope import FailureEnvelope
from console.letters.values import from_json
from console.models import Broker, DeadLetter, DeadPlace
from console.refusals import Forbidden, Refusal
from console.services import audit
from console.services.custody import mark_acked, store_captured
from console.services.parsing import unstorable_text

IMPORTED = DeadPlace.IMPORTED
#: Letters stored per transaction.
BATCH = 500
#: Bad lines reported one by one (the count goes on).
REPORTED = 200
#: A line (one letter) may be at most this long: a 16 MiB body as base64, and its envelope.
MAX_LINE = 24 * 1024 * 1024


class ImportRefused(Refusal):
    """An import the console refuses whole (not an export, no place to put it), saying why."""


@dataclass
class Imported:
    """What an import did: the place, how many letters went in, the lines refused (number and
    why), the file's hash and who exported it."""

    place: DeadPlace
    imported: int = 0
    bad: list[tuple[int, str]] = field(default_factory=list)
    bad_count: int = 0
    sha256: str = ""
    exported_by: str = ""
    masked: int = 0


class _BadLine(Exception):
    pass


def do_import(source: Any, *, actor: Actor, broker: Broker, place_name: str, reason: str,
              file_name: str = "") -> Imported:
    """Import an export (``source``: a binary file-like object with ``readline``, a request's
    body or an upload, or an iterable of lines) into the imported place ``place_name`` of
    ``broker`` (made when new). Only an admin of every place imports (a
    new place is outside any limit)."""
    if not scope_of(actor).unlimited:
        raise Forbidden("an import makes a place of its own: only an admin of every place imports")
    place_name = place_name.strip()
    if not place_name or len(place_name) > 500 or unstorable_text(place_name):
        raise ImportRefused("an import needs the name of its place (at most 500 characters)")
    digest = hashlib.sha256()
    numbered = _numbered(source, digest)
    meta = _meta(next(numbered, None))
    place = _place(broker, place_name, actor)
    result = Imported(place=place, exported_by=str(meta.get("reader", ""))[:150])
    batch: list[Received] = []
    why = reason or f"import of {file_name or 'an export'} by {result.exported_by or 'someone'}"
    for number, line in numbered:
        try:
            batch.append(_received(line, meta))
        except _BadLine as exc:
            result.bad_count += 1
            if len(result.bad) < REPORTED:
                result.bad.append((number, str(exc)))
            continue
        if len(batch) >= BATCH:
            _store(place, batch, actor, why, result)
            batch = []
    _store(place, batch, actor, why, result)
    result.sha256 = digest.hexdigest()
    with transaction.atomic():
        audit.record("letters.imported", actor=actor, reason=reason, place=place, count=result.imported,
                     target=f"{result.imported} letters into {place}",
                     outcome="complete" if not result.bad_count else "partly",
                     details={"file": file_name[:200], "sha256": result.sha256, "exported_by": result.exported_by,
                              "exported_at": meta.get("at"), "export_filter": meta.get("filter"),
                              "masked": result.masked, "bad_lines": result.bad_count,
                              "first_bad": [{"line": n, "error": e} for n, e in result.bad[:20]]})
    return result


def _numbered(source: Any, digest: Any) -> Iterator[tuple[int, bytes]]:
    """The file's non-empty lines with their numbers (from 1), hashing every byte read. A line
    longer than MAX_LINE is never held whole: it is read in pieces and comes as its first
    MAX_LINE + 1 bytes (which the line's check refuses)."""
    number = 0
    for line in _lines(source):
        number += 1
        digest.update(line)
        if len(line) > MAX_LINE and not line.endswith(b"\n") and hasattr(source, "readline"):
            for rest in _lines(source):  # the rest of the long line, hashed and let go
                digest.update(rest)
                if len(rest) <= MAX_LINE or rest.endswith(b"\n"):
                    break
        if line.strip():
            yield number, line


def _lines(source: Any) -> Iterator[bytes]:
    """Lines of at most MAX_LINE + 1 bytes each from a file-like object, or an iterable's lines."""
    if not hasattr(source, "readline"):
        yield from source
        return
    while line := source.readline(MAX_LINE + 1):
        yield line


def _meta(first: tuple[int, bytes] | None) -> dict[str, Any]:
    try:
        meta = json.loads(first[1])["export"] if first is not None else None
    except (ValueError, KeyError, TypeError):
        meta = None
    if not isinstance(meta, dict):
        raise ImportRefused("this is not an export of the console: its first line is not "
                           '{"export": {...}} (export as JSON Lines)')
    return meta


@transaction.atomic
def _place(broker: Broker, name: str, actor: Actor) -> DeadPlace:
    place, made = DeadPlace.objects.get_or_create(broker=broker, scope="", name=name, defaults={
        "kind": IMPORTED, "discovered_by": IMPORTED})
    if place.kind != IMPORTED:
        raise ImportRefused(f"{place} is a place of {broker.name} itself: import into a new name")
    if made:
        audit.record("place.appeared", actor=actor, place=place, details={"discovered_by": IMPORTED})
    return place


def _received(line: bytes, meta: dict[str, Any]) -> Received:
    """One letter's line as the message it was, or _BadLine saying why not."""
    if len(line) > MAX_LINE:
        raise _BadLine(f"longer than {MAX_LINE // (1024 * 1024)} MiB")
    try:
        record = json.loads(line)
    except ValueError as exc:
        raise _BadLine(f"not JSON: {exc}") from None
    if not isinstance(record, dict):
        raise _BadLine("not a letter: a JSON object is expected")
    masked = record.get("masked") is True or meta.get("masked") is True
    try:
        body = _body(record)
        headers, properties = from_json(_object(record, "headers")), from_json(_object(record, "properties"))
        details = _object(record, "details")
        envelope = FailureEnvelope(
            origin_address=_text(record, "origin_address"), origin_queue=_text(record, "origin_queue"),
            routing_key=_text(record, "routing_key"), reason=_text(record, "reason"),
            death_count=_count(record, "death_count"), first_failed_at=_moment(record, "first_failed_at"),
            last_failed_at=_moment(record, "last_failed_at"), exception_type=_text(record, "exception_type"),
            exception_message=_text(record, "exception_message"), exception_stack=_text(record, "exception_stack"),
            details={**details, "imported": {"id": record.get("id") if isinstance(record.get("id"), int) else None,
                                             "from": str(meta.get("reader", ""))[:150], "masked": masked}},
            trace_id=_text(record, "trace_id"), span_id=_text(record, "span_id"))
    except (binascii.Error, InvalidOperation, ValueError, TypeError) as exc:
        raise _BadLine(str(exc)[:300]) from None
    return Received(token=None, body=body, headers=headers, properties=properties, envelope=envelope,
                    message_id=_text(record, "message_id"))


def _body(record: dict[str, Any]) -> bytes:
    encoding, body = record.get("body_encoding"), record.get("body")
    if encoding == "hidden":
        return b""
    if not isinstance(body, str):
        raise _BadLine("body must be text")
    if encoding == "text":
        return body.encode("utf-8", "surrogatepass")
    if encoding == "base64":
        return base64.b64decode(body, validate=True)
    raise _BadLine("body_encoding must be text, base64 or hidden")


def _object(record: dict[str, Any], name: str) -> dict[str, Any]:
    value = record.get(name) or {}
    if not isinstance(value, dict):
        raise _BadLine(f"{name} must be a JSON object")
    return value


def _text(record: dict[str, Any], name: str) -> str:
    value = record.get(name) or ""
    if not isinstance(value, str):
        raise _BadLine(f"{name} must be text")
    return value


def _count(record: dict[str, Any], name: str) -> int:
    value = record.get(name) or 0
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**31:
        raise _BadLine(f"{name} must be a whole number")
    return value


def _moment(record: dict[str, Any], name: str) -> datetime | None:
    value = record.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _BadLine(f"{name} must be an ISO 8601 time")
    moment = datetime.fromisoformat(value)
    return moment if moment.tzinfo is not None else timezone.make_aware(moment)


@transaction.atomic
def _store(place: DeadPlace, batch: list[Received], actor: Actor, reason: str, result: Imported) -> None:
    """Take a batch into custody; nothing waits on a broker for it. A masked export's letters
    are quarantined: a replay refuses them until an admin releases them."""
    if not batch:
        return
    ids = store_captured(place, batch, job=None, actor=actor, reason=reason).new
    mark_acked(ids)
    result.imported += len(ids)
    masked = [letter_id for letter_id, message in zip(ids, batch, strict=True)
              if message.envelope.details["imported"]["masked"]]
    if masked:
        DeadLetter.objects.filter(id__in=masked).update(
            quarantined_at=timezone.now(), quarantine_reason="imported masked: an admin confirms before a replay")
        result.masked += len(masked)


def masked_and_unconfirmed(letters: Any) -> Any:
    """Of ``letters`` (a queryset), those imported masked that no admin released yet (in
    imported places only: a wide selection elsewhere pays one look at the few places)."""
    return letters.filter(place__kind=IMPORTED, quarantined_at__isnull=False, envelope_details__imported__masked=True)
