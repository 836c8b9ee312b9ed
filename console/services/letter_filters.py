"""The letters' filter, declared once (django-filter): the letters list page, a place's page,
``/api/letters/``, a job's frozen filter, a rule's scope and the group counts all parse and
apply a filter through :class:`LetterFilterSet` (via console.services.selection.filter_letters).

Its keys are FILTER_KEYS of console.services.selection, as strings: numbers are ASCII digits
(``?weekday=²`` is a 400, not a 500), text is kept as typed and must be storable (no NUL).
"""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.db.models import (
    BinaryField,
    Case,
    Exists,
    F,
    Func,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Value,
    When,
)
from django.db.models.fields.json import KeyTextTransform
from django.db.models.lookups import IContains
from django_filters import FilterSet

from console.decoders import schemas
from console.decoders.reading import readable, where_of
from console.letters.envelope import FINGERPRINT_DIGITS
from console.models import DeadLetter, LetterState
from console.models.letter import LetterSearch, LetterTrace
from console.services import match_words
from console.services.flights import states_condition
from console.services.parsing import (
    FlagFilter,
    MomentFilter,
    NumberFilter,
    TextField,
    TextFilter,
)
from console.services.search_rows import read_in_python
from console.tracing.context import valid_trace_id


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


_HEX = re.compile(r"[0-9a-fA-F]+")

#: The state filter's word for every state (as the groups' filter takes it).
ANY_STATE = "any"


class StatesField(TextField):
    """Letter states, comma separated (``held,failed``), or ``any``: a word that is no state is
    refused, not read as a filter that matches nothing."""

    def clean(self, value: Any) -> list[str] | None:
        value = super().clean(value)
        if value in (None, ""):
            return None
        states = [part.strip() for part in value.split(",") if part.strip()]
        unknown = [part for part in states if part not in (*LetterState.values, ANY_STATE)]
        if unknown or not states:
            raise forms.ValidationError(f"must be states among {', '.join(LetterState.values)} (comma "
                                        f"separated), or {ANY_STATE}", code="state")
        return states


class StatesFilter(TextFilter):
    field_class = StatesField


class TraceIdField(TextField):
    """A trace id: 32 hex digits, or 16 for a 64-bit B3 or Jaeger id (stored padded with zeros,
    as console.tracing.context reads it); any case, not all zero."""

    def clean(self, value: Any) -> str | None:
        value = super().clean(value)
        if value in (None, ""):
            return None
        trace_id = str(value).strip().lower()
        if len(trace_id) == 16:
            trace_id = trace_id.rjust(32, "0")
        if not valid_trace_id(trace_id):
            raise forms.ValidationError("must be a trace id: 32 hex digits (16 for a 64-bit id), not all zero",
                                        code="trace_id")
        return trace_id


class TraceIdFilter(TextFilter):
    field_class = TraceIdField


def header_condition(name: str, value: str | None, *, indexed: bool = True) -> Q:
    """Letters carrying the header ``name`` (with ``value``, unless it is empty). The letter's own
    headers decide; ``indexed``, LetterSearch's GIN index on the headers (a copy kept off the
    letters table) finds the candidates first, a letter whose search row is still a placeholder
    (console.services.search_rows) among them. A pass that reads every letter anyway (a rule set
    decided in one query) needs no index."""
    if value in (None, ""):
        return Q(headers__has_key=name)
    whole = match_words.exactly(value)
    if whole is None:  # a part, in any case (console.services.match_words); the index cannot help
        return Q(headers__has_key=name) & Q(IContains(KeyTextTransform(name, "headers"), value))
    wanted = {name: whole}
    if not indexed:
        return Q(headers__contains=wanted)
    return Q(Exists(LetterSearch.objects.filter(Q(headers__contains=wanted) | Q(pending=True),
                                                letter_id=OuterRef("pk")))) & Q(headers__contains=wanted)


class LetterFilterSet(FilterSet):
    """Letters matching a filter. Text in the body is matched byte for byte (UTF-8).

    Also applied to querysets of GroupCount (place, broker, state, fingerprint, reason and exception only:
    console.services.group_counts.COUNTED_KEYS)."""

    place = NumberFilter(field_name="place_id", help_text="Dead place id")
    broker = NumberFilter(field_name="broker_id", help_text="Broker id")
    state = StatesFilter(method="filter_state",
                         help_text="held, replaying, replayed, failed, purged; several comma separated; any")
    # Texts match as console.services.match_words reads a word: a part in any case, or "exactly".
    origin = TextFilter(method="filter_words", field_name="origin_queue origin_address",
                        help_text='Origin queue or address: a part, any case; "exactly" in quotes')
    reason = TextFilter(method="filter_words", field_name="reason",
                        help_text='e.g. rejected, expired, maxlen, delivery_limit: a part, any case; "exactly"')
    exception = TextFilter(method="filter_words", field_name="exception_type",
                           help_text='Exception type: a part, any case; "exactly" in quotes')
    fingerprint = TextFilter(method="filter_fingerprint",
                             help_text="Failure group: its fingerprint, or its first characters as pages show them")
    header = TextFilter(method="filter_header", help_text="Has this header")
    header_value = TextFilter(method="filter_header_value",
                              help_text='...with this value (needs header): a part, any case; "exactly"')
    q = TextFilter(method="filter_body", help_text="Text contained in the body")
    since = MomentFilter(field_name="captured_at", lookup_expr="gte", help_text="Captured at or after")
    until = MomentFilter(field_name="captured_at", lookup_expr="lt", help_text="Captured before")
    # What the failure analytics link to: the consumer and host framework headers named, the
    # ISO weekday (1 Monday) and hour the letter arrived (UTC), replayed letters that came back.
    consumer = TextFilter(method="filter_words", field_name="envelope_details__consumer",
                          help_text='Consumer named by framework headers: a part, any case; "exactly"')
    host = TextFilter(method="filter_words", field_name="envelope_details__host",
                      help_text='Server named by framework headers: a part, any case; "exactly"')
    weekday = NumberFilter(field_name="captured_at", lookup_expr="iso_week_day", min_value=1, max_value=7,
                           help_text="Arrived on this ISO weekday (1 Monday .. 7), UTC")
    hour = NumberFilter(field_name="captured_at", lookup_expr="hour", min_value=0, max_value=23,
                        help_text="Arrived in this hour (0-23), UTC")
    came_back = FlagFilter(method="filter_came_back", help_text="Replayed and died again (true) or not (false)")
    trace_id = TraceIdFilter(method="filter_trace", label="Trace id",
                             help_text="The distributed trace it failed in (32 hex digits; 16 for a 64-bit id)")

    class Meta:
        model = DeadLetter
        fields: list[str] = []

    def filter_state(self, qs: QuerySet[Any], name: str, value: list[str]) -> QuerySet[Any]:
        if ANY_STATE in value:
            return qs
        if qs.model is DeadLetter:  # a letter in flight is replaying (console.services.flights)
            return qs.filter(states_condition(value))
        return qs.filter(state__in=value)

    def filter_fingerprint(self, qs: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
        """The whole fingerprint, or the first characters of one (pages show eight and "…"): a
        range of the fingerprint's index, every fingerprint that starts so."""
        wanted = value.strip().rstrip("…").rstrip(".").strip()
        if _HEX.fullmatch(wanted) and len(wanted) < FINGERPRINT_DIGITS:
            wanted = wanted.lower()
            return qs.filter(fingerprint__gte=wanted, fingerprint__lt=wanted + "g")  # "g" follows every hex digit
        return qs.filter(fingerprint=value.strip())

    def filter_words(self, qs: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
        """A text filter: the word matched in the filter's fields (``name``: its field_name, space
        separated)."""
        return qs.filter(match_words.condition(value, *name.split()))

    def filter_header(self, qs: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
        return qs.filter(header_condition(value, self.form.cleaned_data.get("header_value")))

    def filter_header_value(self, qs: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
        return qs  # applied with the header it belongs to (filter_header)

    @schemas.one_look()  # the schemas' key read once for every body read here
    def filter_body(self, qs: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
        needle = value.encode("utf-8")
        # The escaped body holding the escaped needle follows from the body holding the needle,
        # and lets PostgreSQL narrow the search with the trigram index on the escaped bodies
        # (LetterSearch) instead of reading every body; position() then decides exactly
        # (an escaped needle can also match across other bytes' escapes: "200" in "\\200").
        # A body longer than the text LetterSearch keeps may hold it anyway, as may one whose
        # search row is still a placeholder (partial too: console.services.search_rows).
        may_hold = LetterSearch.objects.filter(Q(text__contains=escaped(needle)) | Q(partial=True),
                                               letter_id=OuterRef("pk"))
        # A compressed body, or one in a body format (console.decoders), is searched as people
        # read it, decoded: its search row holds the decoded text, which proposes it, and the
        # decoded body decides, here in Python (such letters are rare; PostgreSQL cannot decode
        # them).
        # They are found from their search rows' own index (or, for a placeholder, the
        # pending one), and all of them are read: testing COMPRESSED, or the search text, on
        # every candidate read a quarter of a million letters once more for a common needle
        # (two seconds at a million letters).
        compressed = Case(When(read_in_python(), then=Value(True)), default=Value(False))
        marked = LetterSearch.objects.filter(Q(compressed=True) | Q(pending=True)).values("letter_id")
        proposed = qs.alias(compressed=compressed).filter(id__in=marked, compressed=True)
        decoded = [letter.pk for letter in proposed.only("id", "body", "properties", "headers", "place_id",
                                                         "origin_queue").iterator(chunk_size=50)
                   if needle in readable(letter.body_bytes, letter.properties, letter.headers, where_of(letter))]
        holding: QuerySet[Any] = qs.alias(body_match=BytesPosition(needle), compressed=compressed).filter(
            Exists(may_hold), body_match__gt=0, compressed=False)
        return holding | qs.filter(pk__in=decoded) if decoded else holding

    def filter_trace(self, qs: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
        # Through LetterTrace's index (the letters table has none on trace_id, see DeadLetter);
        # a capture's letters have no LetterTrace row until their search placeholders are
        # filled (console.services.search_rows): among those, their own trace_id decides.
        traced = LetterTrace.objects.filter(trace_id=value).values("letter_id")
        pending = LetterSearch.objects.filter(pending=True).values("letter_id")
        waiting = DeadLetter.objects.filter(id__in=pending, trace_id=value).order_by().values("id")
        return qs.filter(id__in=traced.union(waiting, all=True))

    def filter_came_back(self, qs: QuerySet[Any], name: str, value: bool) -> QuerySet[Any]:
        returned = Exists(DeadLetter.objects.filter(parent_id=OuterRef("pk")))
        return qs.filter(returned) if value else qs.exclude(returned)
