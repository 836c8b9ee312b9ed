"""Search rows written after the capture, not during it.

A capture's batch is committed, then acknowledged on the broker; writing each letter's search
row (its escaped body for the trigram index, its headers for the GIN index) in that same
transaction was half of PostgreSQL's work per letter. Within ``written_later()`` the insert
trigger writes a cheap placeholder instead (migration 0029: no text, ``partial`` and
``pending`` set), and ``fill_search_rows`` makes the placeholders real afterwards, in batches
of their own (the Celery task ``console.fill_search_rows``, queued when a capture ends and run
by beat as well).

Searches are complete meanwhile: a placeholder is ``partial``, so the body filter reads such a
letter's body itself (as it does for bodies longer than the text kept), and ``pending``, so the
header filter reads the letter's own headers (console.services.selection).

A compressed letter (console.letters.compression: rare, so only these pay) is searched as
people read it: PostgreSQL cannot decode it, so the fill writes its search row's text from the
decoded body (``write_decoded_texts``), in the format the triggers use, and the body filter
lets the decoded body decide (console.services.letter_filters). An edited copy gets its row so
too (console.services.edit). The letters whose failure groups a body's value splits are
grouped so as their documents are written (console.services.group_keys).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from celery import current_app
from django.db import DatabaseError, connection, transaction
from django.db.models import BinaryField, Exists, F, Func, OuterRef, Q, QuerySet, Value
from django.db.models.lookups import Exact

from console.decoders import schemas
from console.decoders.reading import content_types, first_bytes, readable, where_of
from console.models import DeadLetter, LetterSearch
from console.services import group_keys
from console.services.mapped_letters import named_by

log = logging.getLogger(__name__)

#: Placeholders made real per transaction.
FILL_BATCH = 2000

#: Letters whose properties or headers may say their body is compressed (the database's
#: proposal, a superset: console.letters.compression.encoding_of decides).
COMPRESSED = Q(properties__content_encoding__iregex=r"^\s*(x-)?(gzip|deflate|zlib|zstd|zstandard)\s*(:|$)") | Q(
    headers__has_any_keys=[variant for name in ("content-encoding", "content_encoding", "compression")
                           for variant in (name, name.title(), name.upper())])
#: What may say so in a letter's properties or headers as JSON text (any case): a content
#: encoding naming a compression (not Celery's everyday "utf-8"), or a compression header.
_NAMES_COMPRESSION = re.compile(r'"(?:content[-_]encoding"\s*:\s*"\s*(?:x-)?(?:gzip|deflate|zlib|zstd)|compression")',
                                re.IGNORECASE)


@schemas.one_look()
def read_in_python() -> Q:
    """Letters whose bodies are searched as people read them, which PostgreSQL cannot do: those
    that may be compressed (COMPRESSED), and those whose content type names a body format of
    console.decoders (MessagePack, CBOR...), whose first bytes may (an Avro container file), or
    that an admin's mapping names, read as JSON. A superset; the reading decides."""
    named = Q()
    for content_type in content_types():
        named |= Q(properties__content_type__istartswith=content_type)
        for header in ("content-type", "Content-Type", "content_type"):
            named |= Q(headers__contains={header: content_type})
    for mapping in schemas.mapped():  # an admin's: the bodies of a place, an origin or a header value
        named |= named_by(mapping)
    for prefix in first_bytes():
        named |= Q(Exact(Func(F("body"), Value(1), Value(len(prefix)), function="substring",
                              output_field=BinaryField()), Value(prefix, output_field=BinaryField())))
    return COMPRESSED | named


def _may_be_read(row: Mapping[str, Any], named_formats: Sequence[str], prefixes: tuple[bytes, ...],
                 mapped: Sequence[Any]) -> bool:
    """Whether a letter's properties or headers (JSON text) may say it is compressed, or name a
    body format (``named_formats``: how a content type of one starts in JSON, ``"application/...``),
    or its body starts as a format's may (``prefixes``), or an admin's mapping may name it."""
    texts = (row["properties"], row["headers"])
    return (any(_NAMES_COMPRESSION.search(text) for text in texts)
            or any(start in text.lower() for text in texts for start in named_formats)
            or bytes(row["body"]).startswith(prefixes)
            or any(found.place_id in (None, row["place_id"]) and found.origin in ("", row["origin_queue"])
                   and found.header in row["headers"] for found in mapped))


#: Whether this thread's letters get placeholder search rows now (``written_later``), as the
#: connection's ``dlo.search_later`` says to the insert trigger.
_later: ContextVar[bool] = ContextVar("search_rows_later", default=False)


@contextmanager
def written_later() -> Iterator[None]:
    """Letters inserted on this connection meanwhile get placeholder search rows."""
    with connection.cursor() as cursor:
        cursor.execute("SET dlo.search_later = 'on'")
    token = _later.set(True)
    try:
        yield
    finally:
        _later.reset(token)
        try:
            with connection.cursor() as cursor:
                cursor.execute("RESET dlo.search_later")
        except DatabaseError:
            pass  # a broken connection is not reused; a new one starts without the setting


def fill_search_rows(batch: int = FILL_BATCH) -> int:
    """Make every placeholder real (several transactions of ``batch``, in id order); returns
    how many there were."""
    filled, after = 0, 0
    while True:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT taken, last FROM console_letter_search_fill(%s, %s)", [after, batch])
            taken, last = cursor.fetchone()
            if taken:
                filled_now = DeadLetter.objects.filter(id__gt=after, id__lte=last)
                write_decoded_texts(filled_now)
                group_keys.regroup(filled_now, tell=True)  # their documents are written now
        if not taken:
            return filled
        filled, after = filled + taken, last


@schemas.one_look()  # the schemas' key read once for all the letters
def write_new_decoded_texts(ids: list[int], rows: Sequence[Mapping[str, Any]]) -> None:
    """After letters were inserted from ``rows`` (their JSON columns as text, console.services.
    custody): the search rows of those that may be compressed, and the failure groups of those a
    body's value splits (console.services.group_keys). A text search of the JSON first,
    so that the others pay next to nothing. A capture's letters (``written_later``) have
    placeholders, which the fill writes decoded: nothing is looked at here, on capture's path."""
    if _later.get():
        return
    formats, prefixes = [f'"{content_type}' for content_type in content_types()], first_bytes()
    mapped = schemas.mapped()
    named = [letter_id for letter_id, row in zip(ids, rows, strict=True)
             if _may_be_read(row, formats, prefixes, mapped)]
    if named:
        write_decoded_texts(DeadLetter.objects.filter(id__in=named))
    group_keys.regroup(DeadLetter.objects.filter(id__in=ids), tell=True)


def write_decoded_texts(letters: QuerySet[DeadLetter]) -> int:
    """Write the search-row text of the ``letters`` read in Python (:func:`read_in_python`:
    compressed, or in a body format) from their bodies as people read them (what
    ``encode(body, 'escape')`` would give for those bytes, cut as the triggers cut), and their
    documents for the rules' body paths from the same reading (what ``console_body_json`` makes
    of it: a Protobuf message's fields, a compressed JSON body's); a body that does not decode or
    read gets the text of its stored bytes, which are what is shown. Returns how many rows were
    written. Placeholders are left to the fill. Every such row is marked ``compressed`` (read in
    Python), read or not: the body filter reads these letters' bodies itself."""
    return _write_texts(letters.filter(read_in_python()))


def write_texts_again() -> int:
    """:func:`write_decoded_texts` of every letter read in Python now, and of those read so
    before (a schema deleted since: their rows are written from their stored bytes again)."""
    marked = LetterSearch.objects.filter(compressed=True, pending=False).values("letter_id")
    return _write_texts(DeadLetter.objects.filter(read_in_python() | Q(id__in=marked)))


@schemas.one_look()  # the schemas' key read once for all the letters
def _write_texts(letters: QuerySet[DeadLetter]) -> int:
    written = 0
    letters = letters.filter(Exists(LetterSearch.objects.filter(letter_id=OuterRef("pk"), pending=False)))
    LetterSearch.objects.filter(letter_id__in=letters.values("id"), pending=False).update(compressed=True)
    for letter_id, read in _read(letters):
        text = read[:LetterSearch.TEXT_BYTES]
        with connection.cursor() as cursor:
            cursor.execute("UPDATE console_lettersearch SET text = encode(%s::bytea, 'escape'), partial = %s "
                           "WHERE letter_id = %s AND NOT pending",
                           [text, len(read) > len(text), letter_id])
            written += cursor.rowcount
            _write_document(cursor, letter_id, read)
    return written


@schemas.one_look()  # the schemas' key read once for all the letters
def write_decoded_documents(letters: QuerySet[DeadLetter]) -> None:
    """The rules' documents of those of ``letters`` read in Python whose search rows are still
    placeholders (a capture's, not filled yet): a round of the rules decides them now
    (console.jobs.automation.rules_at_work), and a body path must see a decoded body's values.
    The fill writes them again with the search rows."""
    letters = letters.filter(read_in_python(),
                             Exists(LetterSearch.objects.filter(letter_id=OuterRef("pk"), pending=True)))
    with connection.cursor() as cursor:
        for letter_id, read in _read(letters):
            _write_document(cursor, letter_id, read)


def _read(letters: QuerySet[DeadLetter]) -> Iterator[tuple[int, bytes]]:
    """The ``letters`` with their bodies as people read them (as stored, where they do not
    decode or read: a schema deleted since, which the rows written before it still followed)."""
    for letter in letters.only("id", "body", "properties", "headers", "place_id", "origin_queue").iterator(
            chunk_size=50):
        yield letter.pk, readable(letter.body_bytes, letter.properties, letter.headers, where_of(letter))


def _write_document(cursor: Any, letter_id: int, read: bytes) -> None:
    cursor.execute("INSERT INTO console_letterdocument (letter_id, document) VALUES (%s, console_body_json(%s::bytea)) "
                   "ON CONFLICT (letter_id) DO UPDATE SET document = EXCLUDED.document", [letter_id, read])


def fill_later() -> None:
    """Have a worker fill the placeholders (console.fill_search_rows); beat does it anyway."""
    try:
        current_app.send_task("console.fill_search_rows")
    except Exception as exc:  # noqa: BLE001 - beat fills them when Celery is back
        log.warning("could not queue the search rows' fill (beat will run it): %s", exc)
