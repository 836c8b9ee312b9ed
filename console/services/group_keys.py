"""Failure groups split by a body field: an admin's mapping (console.models.BodyMapping) may name
a ``group_path``, and the value there in a letter's body, as read (JSON, or a Protobuf, Avro,
MessagePack or CBOR body decoded: the letter's rules document, console.models.LetterDocument),
joins the key of the letter's failure group. The same exception then splits by, say, the
payment provider or the event type a body carries.

The key is the letter's fingerprint itself (console.letters.envelope), so every reader of
groups (the pages, the API, the counts the database keeps, triage, notes, traces, the Spark
history) sees the split groups without knowing of it: :func:`keyed` is the envelope's
fingerprint and the value hashed together, or the envelope's alone when the body has no value
there. A capture's letters are grouped so once their documents are written (console.services.
search_rows fills them after the capture, :func:`regroup` beside it), never in the capture's
path; others at once; every letter a mapping names when it is made or deleted.

A group split so shows its key (``$.provider = "stripe"``) from its sample letter's body, masked
for the reader as the body is (:func:`shown_keys`), and a new one is told of
(``group.new``) masked as for everyone.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from django.db import connection
from django.db.models import Exists, OuterRef, Q, QuerySet, Subquery

from console import json_path
from console.access.redaction_policy import for_everyone
from console.access.redactor import MASK, Redactor
from console.decoders import schemas
from console.letters.envelope import FINGERPRINT_DIGITS, FailureEnvelope
from console.models import DeadLetter, DeadPlace
from console.models.letter import LetterDocument, LetterSearch
from console.notifications.events import listened, notify
from console.services.mapped_letters import named_by

#: Letters regrouped per statement.
BATCH = 500

#: What a letter's document lacks at a path (as distinct from a JSON null there).
_ABSENT = object()


def keyed(fingerprint: str, path: str, value: Any) -> str:
    """The fingerprint of a letter whose envelope's is ``fingerprint`` and whose body holds
    ``value`` at ``path``: the two hashed together (the envelope's alone without a value)."""
    if value is _ABSENT:
        return fingerprint
    text = "\x1f".join([fingerprint, path, json.dumps(value, sort_keys=True, ensure_ascii=False)])
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:FINGERPRINT_DIGITS]


def value_at(document: Any, path: str) -> Any:
    """The value at ``path`` in a body's document, or _ABSENT. One place, as a rule's body path
    reads it: ``..name`` is read as ``.name``, a wildcard as a field named ``*``, and a field
    named by ASCII digits is an item of a list too."""
    node = document
    for _, key in json_path.steps(path):
        if isinstance(node, list) and (isinstance(key, int) or (key.isascii() and key.isdigit())):
            index = int(key)
            if index >= len(node):
                return _ABSENT
            node = node[index]
        elif isinstance(node, dict) and str(key) in node:
            node = node[str(key)]
        else:
            return _ABSENT
    return node


def key_of(place_id: int | None, origin: str, headers: Any) -> schemas.Mapping | None:
    """The closest mapping with a group path that names a letter so placed, or None."""
    where = schemas.Where(place_id, origin or "")
    return next((mapping for mapping in schemas.grouped() if mapping.applies(where, headers)), None)


def envelope_fingerprint(letter: DeadLetter) -> str:
    """The fingerprint the letter's envelope gives, without a body's value (the letter's own
    columns: console.letters.rows wrote them from that envelope)."""
    return FailureEnvelope(origin_queue=letter.origin_queue, reason=letter.reason,
                           exception_type=letter.exception_type, exception_message=letter.exception_message,
                           exception_stack=letter.exception_stack).fingerprint()


@schemas.one_look()
def regroup(letters: QuerySet[DeadLetter], *, also: Q | None = None, tell: bool = False) -> int:
    """Give the ``letters`` that a mapping with a group path names (or ``also`` names: those a
    deleted mapping named, grouped by their envelope again) the fingerprint their key makes;
    letters whose document a capture has not written yet wait for it. ``tell``: letters just
    stored, a group new among them is told of. Returns how many letters changed group."""
    named = Q(pk__in=[])
    for grouping in schemas.grouped():
        named |= named_by(grouping)
    if also is not None:
        named |= also
    if named == Q(pk__in=[]):
        return 0
    letters = letters.filter(named).exclude(
        Exists(LetterSearch.objects.filter(letter_id=OuterRef("pk"), pending=True)))
    letters = letters.annotate(document=Subquery(
        LetterDocument.objects.filter(letter_id=OuterRef("pk")).values("document")[:1]))
    changed, told = 0, []
    batch: list[tuple[int, str]] = []
    for letter in letters.only("id", "place_id", "origin_queue", "headers", "reason", "exception_type",
                               "exception_message", "exception_stack", "fingerprint").iterator(chunk_size=BATCH):
        mapping = key_of(letter.place_id, letter.origin_queue, letter.headers)
        fingerprint = envelope_fingerprint(letter)
        if mapping is not None:
            fingerprint = keyed(fingerprint, mapping.group_path, value_at(letter.document, mapping.group_path))
            if tell:
                told.append(letter)
        if fingerprint != letter.fingerprint:
            letter.fingerprint = fingerprint
            batch.append((letter.pk, fingerprint))
        if len(batch) >= BATCH:
            changed += _write(batch)
            batch = []
    changed += _write(batch)
    if tell and told:
        _tell_new_groups(told)
    return changed


def _write(batch: Sequence[tuple[int, str]]) -> int:
    """The letters' new fingerprints, and their traces' (console.models.LetterTrace keeps one
    to count a group's traces); the counts the database keeps follow by trigger."""
    if not batch:
        return 0
    ids, fingerprints = [letter_id for letter_id, _ in batch], [fp for _, fp in batch]
    with connection.cursor() as cursor:
        cursor.execute("UPDATE console_deadletter AS d SET fingerprint = n.fp "
                       "FROM unnest(%s::bigint[], %s::varchar[]) AS n(id, fp) WHERE d.id = n.id", [ids, fingerprints])
        cursor.execute("UPDATE console_lettertrace AS t SET fingerprint = n.fp "
                       "FROM unnest(%s::bigint[], %s::varchar[]) AS n(id, fp) WHERE t.letter_id = n.id",
                       [ids, fingerprints])
    return len(batch)


def _tell_new_groups(letters: Sequence[DeadLetter]) -> None:
    """Groups whose first letters these are (keyed by a body's value: custody told nothing of
    them when they were stored) are told of, with their key masked as for everyone."""
    if not listened("group.new"):
        return
    first: dict[str, DeadLetter] = {}
    for letter in letters:
        if letter.fingerprint:
            first.setdefault(letter.fingerprint, letter)
    oldest = min(letter.pk for letter in letters)
    seen = set(DeadLetter.objects.filter(fingerprint__in=list(first), id__lt=oldest)
               .values_list("fingerprint", flat=True).distinct())
    places = DeadPlace.objects.select_related("broker").in_bulk({letter.place_id for letter in first.values()})
    keys = shown_keys([letter.pk for letter in first.values()], for_everyone())
    for fingerprint, letter in first.items():
        if fingerprint in seen:
            continue
        place = places[letter.place_id]
        key = keys.get(letter.pk, "")
        notify("group.new", key=f"group:{fingerprint}", place=place,
               subject=f"a new failure group in {place}: {letter.exception_type or letter.reason}"
                       + (f" ({key})" if key else ""),
               details={"fingerprint": fingerprint, "origin": letter.origin_queue, "key": key,
                        "exception_type": letter.exception_type, "exception_message": letter.exception_message,
                        "reason": letter.reason})


@schemas.one_look()
def keyed_later(rows: Sequence[dict[str, Any]]) -> list[bool]:
    """For each of new letters' rows (console.letters.rows: headers as JSON text), whether a
    body's value splits its group, which :func:`regroup` tells of once the body is read
    (custody tells of the others at once)."""
    if not schemas.grouped():
        return [False] * len(rows)
    return [key_of(row["place_id"], row["origin_queue"], json.loads(row["headers"])
                   if isinstance(row["headers"], str) else row["headers"]) is not None for row in rows]


@schemas.one_look()
def shown_keys(sample_ids: Sequence[int], redactor: Redactor | None) -> dict[int, str]:
    """For each of ``sample_ids`` (a group's sample letter) whose group a body's value splits,
    the key as a reader is shown it: ``$.provider = "stripe"``, the value read from the body's
    document masked by ``redactor`` (None: unmasked) as the body is."""
    if not schemas.grouped() or not sample_ids:
        return {}
    shown = {}
    letters = DeadLetter.objects.filter(id__in=list(sample_ids)).annotate(document=Subquery(
        LetterDocument.objects.filter(letter_id=OuterRef("pk")).values("document")[:1]))
    for letter in letters.only("id", "place_id", "origin_queue", "headers", "reason", "exception_type",
                               "exception_message", "exception_stack", "fingerprint"):
        mapping = key_of(letter.place_id, letter.origin_queue, letter.headers)
        document = letter.document
        if mapping is None or document is None:
            continue
        value = value_at(document, mapping.group_path)
        if value is _ABSENT or keyed(envelope_fingerprint(letter), mapping.group_path, value) != letter.fingerprint:
            continue  # grouped so before the mapping changed: its key is not this
        if redactor is not None:  # the body's document masked as the body is, then read
            value = value_at(redactor.document(document), mapping.group_path)
        shown[letter.pk] = f"{mapping.group_path} = " + (MASK if value is _ABSENT else
                                                        json.dumps(value, ensure_ascii=False))
    return shown
