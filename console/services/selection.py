"""Letter filters, and the frozen selections that jobs act on.

A filter is a plain dict of the query parameters the pages and the API accept; freezing it
records the highest letter id that existed when the operator looked, so "all N matching" means
those letters, not the ones that arrived since.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from datetime import timezone as dt_timezone
from typing import Any

from django.db.models import BinaryField, Exists, F, Func, IntegerField, OuterRef, Q, QuerySet, Value
from django.utils.dateparse import parse_datetime

from console.access.redaction import MASK, Redactor, for_user
from console.access.scope import visible
from console.models import DeadLetter
from console.models.letter import LetterSearch
from console.refusals import Refusal

FILTER_KEYS = (
    "place", "broker", "state", "origin", "reason", "exception", "fingerprint",
    "header", "header_value", "q", "since", "until",
    # What the failure analytics link to: the consumer and host framework headers named, the
    # ISO weekday (1 Monday) and hour the letter arrived (UTC), replayed letters that came back.
    "consumer", "host", "weekday", "hour", "came_back",
)
#: Envelope details a filter may match exactly.
DETAIL_KEYS = ("consumer", "host")


class BytesPosition(Func):
    """PostgreSQL's ``position(needle in body)`` on bytea: 0 when the body lacks the bytes."""

    function = "position"
    arg_joiner = " in "
    output_field = IntegerField()

    def __init__(self, needle: bytes) -> None:
        super().__init__(Value(needle, output_field=BinaryField()), F("body"))


def escaped(needle: bytes) -> str:
    """``needle`` as PostgreSQL's ``encode(needle, 'escape')`` writes it (see LetterSearch)."""
    return "".join(
        "\\\\" if byte == 0x5C else chr(byte) if 0 < byte < 0x80 else f"\\{byte:03o}" for byte in needle
    )


class SelectionError(Refusal):
    """A filter or selection the console cannot act on."""


def parse_moment(value: str) -> datetime | None:
    """An ISO 8601 date and time as an aware UTC datetime; None if it is not one, or not one
    PostgreSQL can compare with (its time zone offsets stop short of 16 hours)."""
    try:
        parsed = parse_datetime(value)
        if parsed is None:
            return None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=dt_timezone.utc)
        return parsed.astimezone(dt_timezone.utc)
    except (ValueError, OverflowError):
        return None


def _datetime(value: str, name: str) -> datetime:
    parsed = parse_moment(value)
    if parsed is None:
        raise SelectionError(f"{name} must be an ISO 8601 date and time, got {value!r}")
    return parsed


def _number(value: str, name: str, lowest: int, highest: int) -> int:
    if not value.isdigit() or not lowest <= int(value) <= highest:
        raise SelectionError(f"{name} must be a whole number from {lowest} to {highest}, got {value!r}")
    return int(value)


def clean_filter(params: dict[str, Any]) -> dict[str, str]:
    """Keep the known, non-empty filter keys, as strings."""
    cleaned = {}
    for key in FILTER_KEYS:
        value = params.get(key)
        if value not in (None, ""):
            cleaned[key] = str(value)
    return cleaned


def filter_letters(params: dict[str, Any], queryset: QuerySet | None = None) -> QuerySet:
    """Letters matching a filter. Text in the body is matched byte for byte (UTF-8)."""
    qs = DeadLetter.objects.all() if queryset is None else queryset
    f = clean_filter(params)
    try:
        if "place" in f:
            qs = qs.filter(place_id=int(f["place"]))
        if "broker" in f:
            qs = qs.filter(broker_id=int(f["broker"]))
    except ValueError:
        raise SelectionError("place and broker are numeric ids") from None
    if "state" in f:
        qs = qs.filter(state__in=f["state"].split(","))
    if "origin" in f:
        qs = qs.filter(Q(origin_queue=f["origin"]) | Q(origin_address=f["origin"]))
    if "reason" in f:
        qs = qs.filter(reason=f["reason"])
    if "exception" in f:
        qs = qs.filter(exception_type=f["exception"])
    if "fingerprint" in f:
        qs = qs.filter(fingerprint=f["fingerprint"])
    if "header" in f:
        if "header_value" in f:
            # Through LetterSearch's GIN index on the headers (a copy kept off the letters table);
            # a letter whose search row is still a placeholder (console.services.search_rows) is
            # a candidate too, and the letter's own headers decide.
            wanted = {f["header"]: f["header_value"]}
            qs = qs.filter(Exists(LetterSearch.objects.filter(
                Q(headers__contains=wanted) | Q(pending=True), letter_id=OuterRef("pk"))), headers__contains=wanted)
        else:
            qs = qs.filter(headers__has_key=f["header"])
    elif "header_value" in f:
        raise SelectionError("header_value needs header (the header's name)")
    if "q" in f:
        needle = f["q"].encode("utf-8")
        # The escaped body holding the escaped needle follows from the body holding the needle,
        # and lets PostgreSQL narrow the search with the trigram index on the escaped bodies
        # (LetterSearch) instead of reading every body; position() then decides exactly
        # (an escaped needle can also match across other bytes' escapes: "200" in "\\200").
        # A body longer than the text LetterSearch keeps may hold it anyway, as may one whose
        # search row is still a placeholder (partial too: console.services.search_rows).
        may_hold = LetterSearch.objects.filter(Q(text__contains=escaped(needle)) | Q(partial=True),
                                               letter_id=OuterRef("pk"))
        qs = qs.alias(body_match=BytesPosition(needle)).filter(Exists(may_hold), body_match__gt=0)
    for key in DETAIL_KEYS:
        if key in f:
            qs = qs.filter(**{f"envelope_details__{key}": f[key]})
    if "weekday" in f:
        qs = qs.filter(captured_at__iso_week_day=_number(f["weekday"], "weekday", 1, 7))
    if "hour" in f:
        qs = qs.filter(captured_at__hour=_number(f["hour"], "hour", 0, 23))
    if "came_back" in f:
        returned = Exists(DeadLetter.objects.filter(parent_id=OuterRef("pk")))
        qs = qs.filter(returned) if f["came_back"].lower() in ("1", "true", "yes") else qs.exclude(returned)
    if "since" in f:
        qs = qs.filter(captured_at__gte=_datetime(f["since"], "since"))
    if "until" in f:
        qs = qs.filter(captured_at__lt=_datetime(f["until"], "until"))
    return qs


#: Filters on what a rule may mask: confirmed against the masked letter for a user who sees
#: masked content (see visible_matches).
CONTENT_KEYS = ("q", "header_value", "exception", *DETAIL_KEYS)
#: At most this many candidates are confirmed per answer; past them a count is "at least".
CONFIRM_CAP = 2000
_CONFIRM_CHUNK = 25  # whole bodies are read to be masked: a few at a time


@dataclass
class Matches:
    """The letters a user finds with a filter. ``complete`` is False when a content filter had
    more candidates than CONFIRM_CAP: ``letters`` are then the confirmed ones among the first
    candidates (a count of them is "at least"), and the next answer resumes after ``checked_to``."""

    letters: QuerySet
    complete: bool = True
    checked_to: int | None = None


def visible_matches(user, params: dict[str, Any], queryset: QuerySet | None = None,
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
    confirmed = []
    for start in range(0, len(ids), _CONFIRM_CHUNK):
        chunk = DeadLetter.objects.filter(id__in=ids[start:start + _CONFIRM_CHUNK]).only(
            "id", "body", "headers", "exception_type", "envelope_details")
        confirmed.extend(letter.pk for letter in chunk if _still_matches(redactor, letter, f))
    return Matches(letters.filter(id__in=confirmed), complete, None if complete else ids[-1])


def _still_matches(redactor: Redactor, letter: DeadLetter, asked: dict[str, str]) -> bool:
    """Whether the masked letter matches the content filters of ``asked`` (the cleaned filter)
    as the raw one did."""
    if "q" in asked:
        body = redactor.body(letter.body_bytes)
        if body is None or asked["q"].encode("utf-8") not in body:
            return False
    if "header_value" in asked:
        # As the raw filter: the header's value, as stored (a string), equals the needle.
        if redactor.value(letter.headers or {}).get(asked["header"]) != asked["header_value"]:
            return False
    if "exception" in asked and redactor.string(letter.exception_type) != asked["exception"]:
        return False
    details = [key for key in DETAIL_KEYS if key in asked]
    if details:
        shown = redactor.value(letter.envelope_details or {})
        if any(not isinstance(shown, dict) or shown.get(key) != asked[key] for key in details):
            return False
    return True


def freeze(*, ids: list[int] | None = None, filter: dict[str, Any] | None = None) -> dict[str, Any]:
    """The selection a job keeps: explicit ids, or a filter bounded by today's highest id."""
    if ids is not None and filter is not None:
        raise SelectionError("give either letters (ids) or a filter, not both")
    if ids is not None:
        try:
            clean_ids = sorted({int(i) for i in ids})
        except (TypeError, ValueError):
            raise SelectionError("letters must be a list of numeric ids") from None
        if not clean_ids:
            raise SelectionError("no letters selected")
        return {"ids": clean_ids}
    if filter is None:
        raise SelectionError("give letters (ids) or a filter")
    cleaned = clean_filter(filter)
    filter_letters(cleaned)  # validates
    max_id = DeadLetter.objects.order_by("-id").values_list("id", flat=True).first() or 0
    return {"filter": cleaned, "max_id": max_id}


def resolve(selection: dict[str, Any]) -> QuerySet:
    """The letters a frozen selection names (whatever their state now)."""
    if "ids" in selection:
        return DeadLetter.objects.filter(id__in=selection["ids"])
    if "filter" in selection:
        return filter_letters(selection["filter"]).filter(id__lte=selection.get("max_id", 0))
    raise SelectionError("a selection holds ids or a filter")


def arrived_since(selection: dict[str, Any], *, reader) -> int:
    """Letters matching a frozen filter that arrived after it was frozen, among those the
    ``reader`` may see (new letters elsewhere are not theirs to count)."""
    if "filter" not in selection:
        return 0
    letters = filter_letters(selection["filter"], visible(reader, DeadLetter.objects.all()))
    return letters.filter(id__gt=selection.get("max_id", 0)).count()
