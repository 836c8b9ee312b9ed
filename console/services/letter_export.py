"""Letters leave the console as files (console.exports' formats), exactly as the reader may see
them: the letters of their scope matching the letter filters (a page's, a failure group's, the
Letters page's: the same filter set and the same confirmation of content filters for a masked
reader as the lists, console.services.selection), each masked for them as the letter's page
masks it (console.access.redaction_policy.ShownContent, decoded bodies included).

Streamed in bounded memory: the letters are read in keyset pages of at most CHUNK letters and
CHUNK_BYTES of bodies, and each format writes as it reads, gzip-compressed when asked. Audited
twice: when it starts (what was asked for) and when it ends, with the count, the bytes and the
SHA-256 of what was sent, and whether it was cut off (the client went away mid-stream).
"""

from __future__ import annotations

import base64
import hashlib
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from console.access.actors import Actor
from console.access.redaction_policy import ShownContent, for_user
from console.access.redactor import Redactor
from console.access.scope import visible
from console.decoders import schemas
from console.exports import KINDS, ExportFormat
from console.exports.base import Record
from console.models import DeadLetter, DeadPlace
from console.refusals import Refusal
from console.services import audit
from console.services.selection import clean_filter, visible_matches

#: Letters read per query, and at most this much of their bodies.
CHUNK = 500
CHUNK_BYTES = 8 * 1024 * 1024


class ExportError(Refusal):
    """An export the console refuses (an unknown format), saying why."""


@dataclass
class Export:
    """A file on its way: its name, type, the meta it carries, and its bytes as they are made."""

    name: str
    content_type: str
    meta: dict[str, Any]
    chunks: Iterator[bytes]
    gzipped: bool


def described(reader: Actor, params: Mapping[str, Any], *, format_name: str, what: str = "letters",
              among: QuerySet[DeadLetter] | None = None) -> dict[str, Any]:
    """What an export of the letters ``reader`` may see matching ``params`` would say of itself
    (its meta): the format, the selection, the filter as read, the reader, the time, how many
    letters (None when a masked reader's content filter leaves it to be confirmed as they are
    read), and whether they come masked. ``among``: only these letters (a job's)."""
    if format_name not in KINDS:
        raise ExportError(f"unknown format {format_name!r}; formats: {', '.join(KINDS)}")
    asked = {key: value for key, value in clean_filter(dict(params)).items() if value not in ("", None)}
    first = visible_matches(reader, dict(params), _among(reader, among))
    return {"console": "Dead Letter Office", "format": format_name, "selection": what, "filter": _plain(asked),
            "reader": audit.actor_name(reader), "at": timezone.now().isoformat(),
            "count": first.letters.count() if first.complete else None, "masked": for_user(reader) is not None}


def export_letters(reader: Actor, params: Mapping[str, Any], *, format_name: str, gzipped: bool = False,
                   what: str = "letters", among: QuerySet[DeadLetter] | None = None) -> Export:
    """The letters ``reader`` may see matching the letter filters ``params``, as a file of
    ``format_name`` (gzip-compressed when ``gzipped``); ``what`` names the selection in the
    file's name and the audit (a failure group). Its start is audited now, its end when the
    stream ends."""
    meta = described(reader, params, format_name=format_name, what=what, among=among)
    kind = KINDS.get(format_name)
    with transaction.atomic():
        audit.record("letters.export", actor=reader, target=f"{what} as {kind.label}", outcome="started",
                     count=meta["count"],
                     details={"format": format_name, "filter": meta["filter"], "count": meta["count"],
                              "gzip": gzipped})
    tally = _Tally()
    chunks = _sent(kind.write(_records(reader, params, tally, among), meta), reader, meta, kind, gzipped, tally)
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    name = f"{_slug(what)}-{stamp}.{kind.extension}" + (".gz" if gzipped else "")
    return Export(name, kind.content_type, meta, chunks, gzipped)


@dataclass
class _Tally:
    """Letters written so far."""

    letters: int = 0


def _sent(pieces: Iterator[bytes], reader: Actor, meta: dict[str, Any], kind: ExportFormat,
          gzipped: bool, tally: _Tally) -> Iterator[bytes]:
    """The file's bytes as sent (gzip-compressed when asked), hashed and counted; the end is
    audited, complete or cut off (the consumer closed the stream early, or a read failed)."""
    digest, sent, outcome, error = hashlib.sha256(), 0, "cut", ""
    compressor = zlib.compressobj(6, zlib.DEFLATED, 31) if gzipped else None  # wbits 31: a gzip file
    try:
        for piece in pieces:
            data = compressor.compress(piece) if compressor is not None else piece
            if data:
                yield data
                digest.update(data)  # taken by the server: part of what was sent
                sent += len(data)
        if compressor is not None:
            data = compressor.flush()
            yield data
            digest.update(data)
            sent += len(data)
        outcome = "complete"
    except Exception as exc:  # noqa: BLE001 - the download ends; the audit says why
        error = str(exc)[:500]
        raise
    finally:
        with transaction.atomic():
            audit.record("letters.exported", actor=reader, target=f"{meta['selection']} as {kind.label}",
                         outcome=outcome, count=tally.letters,
                         details={"format": meta["format"], "filter": meta["filter"], "bytes": sent,
                                  "sha256": digest.hexdigest(), "gzip": gzipped, "cut": outcome != "complete",
                                  **({"error": error} if error else {})})


def _records(reader: Actor, params: Mapping[str, Any], tally: _Tally,
             among: QuerySet[DeadLetter] | None) -> Iterator[Record]:
    redactor = for_user(reader)
    for page in _pages(reader, params, among):
        with schemas.one_look():  # the body schemas' key read once a page, not once a letter
            records = [record_of(letter, ShownContent(reader, letter), redactor) for letter in page]
        for record in records:
            yield record
            tally.letters += 1


def _among(reader: Actor, among: QuerySet[DeadLetter] | None) -> QuerySet[DeadLetter]:
    return visible(reader, DeadLetter.objects.all() if among is None else among)


def _pages(reader: Actor, params: Mapping[str, Any], among: QuerySet[DeadLetter] | None) -> Iterator[list[DeadLetter]]:
    """The letters ``reader`` may see matching ``params``, in id order, a keyset page at a time
    (a masked reader's content filters confirmed on what they see, as the lists do)."""
    after = 0
    while True:
        matches = visible_matches(reader, dict(params), _among(reader, among), after=after or None)
        page = _page(matches.letters, after)
        if page:
            yield page
            after = page[-1].pk
            continue
        if matches.complete or matches.checked_to is None:
            return
        after = matches.checked_to


def _page(letters: QuerySet[DeadLetter], after: int) -> list[DeadLetter]:
    """The next letters after ``after``: at most CHUNK, and at most CHUNK_BYTES of bodies (one
    at least, whatever its size)."""
    sizes = list(letters.filter(id__gt=after).order_by("id").values_list("id", "body_size")[:CHUNK])
    ids: list[int] = []
    total = 0
    for letter_id, size in sizes:
        if ids and total + size > CHUNK_BYTES:
            break
        ids.append(letter_id)
        total += size
    page = list(DeadLetter.objects.filter(id__in=ids).order_by("id"))
    places = DeadPlace.objects.select_related("broker").in_bulk({letter.place_id for letter in page})
    for letter in page:
        letter.place = places[letter.place_id]  # a few places for a page's letters, read once
    return page


def record_of(letter: DeadLetter, shown: ShownContent, redactor: Redactor | None) -> Record:
    """A letter as the file holds it, masked as ``shown`` (the reader's view). The body is the
    stored bytes, as text when they are UTF-8 (exact either way: an import gives back the same
    bytes) or base64; for a masked reader, the masked text they read, or nothing when it is
    binary (``hidden``). A body in a format or compressed also comes read (``body_read``).
    ``redactor``: the reader's (None: they see content unmasked), for the texts ``shown`` does
    not hold."""
    stored = letter.body_bytes
    read_as = shown.reading.name if shown.reading is not None else (
        shown.compression.encoding if shown.compression is not None else "")
    body_read = None
    if shown.masked:
        encoding, body = ("text", shown.body.decode("utf-8")) if shown.body is not None else ("hidden", None)
    else:
        try:
            encoding, body = "text", stored.decode("utf-8")
        except UnicodeDecodeError:
            encoding, body = "base64", base64.b64encode(stored).decode("ascii")
        if read_as and isinstance(shown.body, (bytes, bytearray)):
            body_read = bytes(shown.body).decode("utf-8", "replace")
    envelope = shown.envelope
    place = letter.place
    return {
        "id": letter.pk, "captured_at": letter.captured_at.isoformat(), "state": letter.state,
        "state_changed_at": letter.state_changed_at.isoformat(),
        "broker": place.broker.name, "broker_kind": place.broker.kind, "place": place.name,
        "place_kind": place.kind, "place_scope": place.scope,
        "message_id": redactor.string(letter.message_id) if redactor is not None else letter.message_id,
        "origin_address": letter.origin_address, "origin_queue": letter.origin_queue,
        "routing_key": letter.routing_key, "reason": letter.reason, "death_count": letter.death_count,
        "first_failed_at": _moment(letter.first_failed_at), "last_failed_at": _moment(letter.last_failed_at),
        "exception_type": envelope.get("exception_type", ""),
        "exception_message": envelope.get("exception_message", ""),
        "exception_stack": envelope.get("exception_stack", ""), "details": envelope.get("envelope_details", {}),
        "fingerprint": letter.fingerprint, "trace_id": letter.trace_id, "span_id": letter.span_id,
        "replay_count": letter.replay_count, "replayed_to": letter.replayed_to,
        "replayed_at": _moment(letter.replayed_at),
        "content_type": _content_type(shown.properties), "body_format": read_as, "body_encoding": encoding,
        "body": body, "body_read": body_read, "body_size": letter.body_size, "masked": shown.masked,
        "headers": shown.headers, "properties": shown.properties,
    }


def _content_type(properties: Any) -> str:
    value = properties.get("content_type", "") if isinstance(properties, dict) else ""
    return value if isinstance(value, str) else ""


def _moment(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def _plain(value: Any) -> Any:
    """A cleaned filter as JSON (moments as text, state lists as lists)."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(item) for item in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def _slug(text: str) -> str:
    return "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "-" for c in text)[:60] or "letters"
