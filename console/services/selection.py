"""Letter filters, and the frozen selections that jobs act on.

A filter is a plain dict of the query parameters the pages and the API accept; freezing it
records the highest letter id that existed when the operator looked, so "all N matching" means
those letters, not the ones that arrived since.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from console.access.actors import Actor
from console.access.redaction_policy import for_user
from console.access.redactor import MASK, Redactor
from console.access.scope import visible
from console.access.traces import may_see
from console.decoders.reading import readable, where_of
from console.models import DeadLetter
from console.refusals import Refusal
from console.services import match_words
from console.services.letter_filters import LetterFilterSet
from console.services.parsing import ascii_whole_number, parsed

FILTER_KEYS = (
    "place", "broker", "state", "origin", "reason", "exception", "fingerprint",
    "header", "header_value", "q", "since", "until",
    # What the failure analytics link to: the consumer and host framework headers named, the
    # ISO weekday (1 Monday) and hour the letter arrived (UTC), replayed letters that came back.
    "consumer", "host", "weekday", "hour", "came_back",
    # The distributed trace a letter failed in (console.tracing).
    "trace_id",
)
#: Envelope details a filter may match exactly.
DETAIL_KEYS = ("consumer", "host")


class SelectionError(Refusal):
    """A filter or selection the console cannot act on."""


def clean_filter(params: Mapping[str, Any]) -> dict[str, str]:
    """Keep the known, non-empty filter keys, as strings."""
    cleaned = {}
    for key in FILTER_KEYS:
        value = params.get(key)
        if value not in (None, ""):
            cleaned[key] = str(value)
    return cleaned


def filter_letters(params: dict[str, Any], queryset: QuerySet[Any] | None = None) -> QuerySet[Any]:
    """Letters (or their counts: console.services.group_counts) matching a filter, parsed by the
    declared LetterFilterSet (console.services.letter_filters): SelectionError, a 400, for a value
    it does not accept (``weekday=²``, a NUL...)."""
    f = clean_filter(params)
    if "header_value" in f and "header" not in f:
        raise SelectionError("header_value needs header (the header's name)")
    qs = DeadLetter.objects.all() if queryset is None else queryset
    letters: QuerySet[Any] = parsed(LetterFilterSet(f, queryset=qs), SelectionError).qs
    return letters


#: Filters on what a rule may mask: confirmed against the masked letter for a user who sees
#: masked content (see visible_matches).
CONTENT_KEYS = ("q", "header_value", "exception", "trace_id", *DETAIL_KEYS)
#: At most this many candidates are confirmed per answer; past them a count is "at least".
CONFIRM_CAP = 2000
_CONFIRM_CHUNK = 25  # whole bodies are read to be masked: a few at a time


@dataclass
class Matches:
    """The letters a user finds with a filter. ``complete`` is False when a content filter had
    more candidates than CONFIRM_CAP: ``letters`` are then the confirmed ones among the first
    candidates (a count of them is "at least"), and the next answer resumes after ``checked_to``."""

    letters: QuerySet[DeadLetter]
    complete: bool = True
    checked_to: int | None = None


#: Up to this many matching letters are counted exactly; past it a list says "more than".
#: Counting is the one part of a list whose cost grows with the place (a body-text filter reads
#: every body), so it is bounded; 10,000 letters cost tens of milliseconds at most.
COUNT_CAP = 10_000


def capped_count(letters: QuerySet[DeadLetter], cap: int = COUNT_CAP) -> tuple[int, bool]:
    """(count, exact): the exact count when it is at most ``cap``, else (cap, False)."""
    found = letters.order_by().values("id")[: cap + 1].count()
    return (found, True) if found <= cap else (cap, False)


def visible_matches(user: Actor, params: dict[str, Any], queryset: QuerySet[DeadLetter] | None = None,
                    after: int | None = None) -> Matches:
    """Letters matching a filter as ``user`` sees them (the place page, its count, the API).

    For a user who sees masked content, a filter on the body, a header's value or the exception
    must not find letters by what the mask hides, or it becomes an oracle: searching for a card
    number, one digit at a time, would tell which letter holds it. The raw filter (fast, by the
    trigram and GIN indexes of LetterSearch) only proposes candidates; each is then masked as
    the user would see it and kept only if the masked content still matches. Searching stays
    useful (what the user can read, they can find) and exact; a needle holding the mask itself
    is refused, as it could only match the masks. ``after`` starts past an id (keyset pages).
    """
    letters = filter_letters(params, queryset)
    f = clean_filter(params)
    asked = {key: f[key] for key in CONTENT_KEYS if key in f}
    redactor = for_user(user) if asked else None
    if redactor is None:
        return Matches(letters)
    if any(MASK in needle for needle in asked.values()):
        raise SelectionError(f"a filter cannot search for the mask {MASK}: it stands for hidden content")
    candidates = letters.order_by("id").values_list("id", flat=True)
    if after is not None:
        candidates = candidates.filter(id__gt=after)
    ids = list(candidates[: CONFIRM_CAP + 1])
    complete = len(ids) <= CONFIRM_CAP
    ids = ids[:CONFIRM_CAP]
    confirmed: list[int] = []
    for start in range(0, len(ids), _CONFIRM_CHUNK):
        chunk = DeadLetter.objects.filter(id__in=ids[start:start + _CONFIRM_CHUNK]).only(
            "id", "body", "headers", "properties", "exception_type", "envelope_details", "trace_id", "span_id")
        confirmed.extend(letter.pk for letter in chunk if _still_matches(redactor, letter, f))
    return Matches(letters.filter(id__in=confirmed), complete, None if complete else ids[-1])


def _still_matches(redactor: Redactor, letter: DeadLetter, asked: dict[str, str]) -> bool:
    """Whether the masked letter matches the content filters of ``asked`` (the cleaned filter)
    as the raw one did."""
    if "q" in asked:
        # As the user reads it: a compressed body decoded (console.letters.compression).
        body = redactor.body(readable(letter.body_bytes, letter.properties, letter.headers, where_of(letter)))
        if body is None or asked["q"].encode("utf-8") not in body:
            return False
    # Texts as the raw filter reads its words (console.services.match_words), on what is shown.
    if "header_value" in asked:
        if not match_words.finds(asked["header_value"], redactor.value(letter.headers or {}).get(asked["header"])):
            return False
    if "exception" in asked and not match_words.finds(asked["exception"], redactor.string(letter.exception_type)):
        return False
    if "trace_id" in asked and not may_see(redactor, letter):
        return False  # its trace headers are masked for this reader: not found by them
    details = [key for key in DETAIL_KEYS if key in asked]
    if details:
        shown = redactor.value(letter.envelope_details or {})
        if any(not isinstance(shown, dict) or not match_words.finds(asked[key], shown.get(key)) for key in details):
            return False
    return True


def freeze(*, ids: list[int] | None = None, filter: dict[str, Any] | None = None) -> dict[str, Any]:
    """The selection a job keeps: explicit ids, or a filter bounded by today's highest id."""
    if ids is not None and filter is not None:
        raise SelectionError("give either letters (ids) or a filter, not both")
    if ids is not None:
        try:
            numbers = {None} if isinstance(ids, (str, bytes, dict)) else {ascii_whole_number(i, 1) for i in ids}
        except TypeError:
            numbers = {None}
        if None in numbers:
            raise SelectionError("letters must be a list of numeric ids")
        clean_ids = sorted(number for number in numbers if number is not None)
        if not clean_ids:
            raise SelectionError("no letters selected")
        return {"ids": clean_ids}
    if filter is None:
        raise SelectionError("give letters (ids) or a filter")
    cleaned = clean_filter(filter)
    filter_letters(cleaned)  # validates
    max_id = DeadLetter.objects.order_by("-id").values_list("id", flat=True).first() or 0
    return {"filter": cleaned, "max_id": max_id}


def resolve(selection: dict[str, Any]) -> QuerySet[DeadLetter]:
    """The letters a frozen selection names (whatever their state now)."""
    if "ids" in selection:
        return DeadLetter.objects.filter(id__in=selection["ids"])
    if "filter" in selection:
        return filter_letters(selection["filter"]).filter(id__lte=selection.get("max_id", 0))
    raise SelectionError("a selection holds ids or a filter")


def arrived_since(selection: dict[str, Any], *, reader: Actor) -> int:
    """Letters matching a frozen filter that arrived after it was frozen, among those the
    ``reader`` may see (new letters elsewhere are not theirs to count)."""
    if "filter" not in selection:
        return 0
    letters = filter_letters(selection["filter"], visible(reader, DeadLetter.objects.all()))
    return letters.filter(id__gt=selection.get("max_id", 0)).count()
