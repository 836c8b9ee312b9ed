"""``/api/letters/``: letters in custody, filtered and paged by keyset, and one letter in full.

Bodies and headers are hostile. They only ever leave as JSON strings (the renderer escapes
them); a body that is not valid UTF-8 leaves as base64, never as mangled text.
"""

from __future__ import annotations

import base64
from typing import Any

from django.db.models import BinaryField, QuerySet
from django.db.models.functions import Substr
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import generics, serializers, status
from rest_framework.exceptions import ParseError
from rest_framework.response import Response
from rest_framework.views import APIView

from console.access.masking import MaskedSerializer, redactor_for_request
from console.access.redactor import PREVIEW_SOURCE_BYTES
from console.access.scope import visible
from console.access.serializers import RedactedLetterMixin
from console.access.traces import shown_trace, shown_traces
from console.api.audit import AuditEventSerializer
from console.api.errors import ErrorSerializer
from console.api.filter_schema import parameters_of
from console.api.keyset import KeysetPagination, cursor_of
from console.decoders import reading
from console.models import AuditEvent, DeadLetter, LetterMark
from console.services.flights import flying, shown_state
from console.services.letter_filters import LetterFilterSet
from console.services.marks import do_mark_letter, do_unmark_letter
from console.services.parsing import ApiIntegerField, FlagField
from console.services.rules import handling_of
from console.services.selection import COUNT_CAP, SelectionError, capped_count, visible_matches

PREVIEW_BYTES = 200
ENVELOPE_FIELDS = [
    "origin_address", "origin_queue", "routing_key", "reason", "death_count", "first_failed_at",
    "last_failed_at", "exception_type", "exception_message", "fingerprint",
]
FILTER_PARAMETERS = parameters_of(LetterFilterSet)  # what filter_letters parses


def body_text_preview(head: bytes) -> str:
    """The first bytes of a body as text, undecodable bytes shown as U+FFFD."""
    return head.decode("utf-8", "replace")


class BodySerializer(MaskedSerializer):
    encoding = serializers.ChoiceField(choices=["text", "base64", "hidden"],
                                       help_text="hidden: binary, and your role sees bodies masked")
    text = serializers.CharField(required=False, help_text="When the body is valid UTF-8")
    base64 = serializers.CharField(required=False, help_text="Otherwise, the exact bytes")


class DecodedSerializer(MaskedSerializer):
    format = serializers.CharField(help_text="The body format's name (msgpack, cbor, pickle, xml...)")
    format_label = serializers.CharField(help_text="What pages call the format (MessagePack, CBOR...)")
    value = serializers.JSONField(allow_null=True, help_text="The body read, as JSON (XML: its text); null when "
                                                             "it does not read")
    error = serializers.CharField(help_text="Why it does not read, or empty")
    unsafe = serializers.BooleanField(help_text="Loading it would run code: the console never does")


class LineageSerializer(MaskedSerializer):
    parent = ApiIntegerField(allow_null=True,  # type: ignore[assignment]  # the payload's key, not DRF's Field.parent
                             help_text="The letter whose replay died again as this one")
    returns = serializers.ListField(child=ApiIntegerField(),
                                    help_text="Letters that came back after replays of this one")


class TraceSerializer(MaskedSerializer):
    trace_id = serializers.CharField(help_text="32 lowercase hex digits")
    span_id = serializers.CharField(help_text="16 lowercase hex digits: the span that published the message, or empty")
    url = serializers.CharField(help_text="The trace in the tracing UI (DLO_TRACE_URL), or empty")


class LetterSummarySerializer(RedactedLetterMixin, serializers.ModelSerializer):
    state = serializers.SerializerMethodField(
        help_text="held, replaying (a replay or move has it in flight), replayed, failed or purged")
    content_type = serializers.SerializerMethodField()
    preview = serializers.SerializerMethodField()
    trace = serializers.SerializerMethodField(
        help_text="The distributed trace it failed in (W3C, B3 or Jaeger headers), or null: also null when "
                  "a redaction rule masks its trace headers for you")

    class Meta:
        model = DeadLetter
        fields = [
            "id", "place", "broker", "state", "state_changed_at", "message_id", "captured_at",
            *ENVELOPE_FIELDS, "replay_id", "parent", "body_size", "body_erased", "content_type", "preview", "trace",
        ]
        read_only_fields = fields

    def get_state(self, letter: DeadLetter) -> str:
        return shown_state(letter)

    def get_content_type(self, letter: DeadLetter) -> str:
        value = letter.properties.get("content_type") if isinstance(letter.properties, dict) else None
        return value if isinstance(value, str) else ""

    @extend_schema_field(TraceSerializer(allow_null=True))
    def get_trace(self, letter: DeadLetter) -> dict | None:
        listed = self.context.get("traces")  # a list's page, read at once (LetterList)
        if listed is not None:
            trace = listed.get(letter.pk)
        else:
            request = self.context.get("request")
            trace = shown_trace(redactor_for_request(request) if request is not None else None, letter)
        return trace.as_dict() if trace is not None else None

    def get_preview(self, letter: DeadLetter) -> str:
        head = getattr(letter, "body_head", None)
        if head is None:
            head = letter.body_bytes[:PREVIEW_BYTES]
        return body_text_preview(bytes(head))


class RuleHandlingSerializer(MaskedSerializer):
    id = ApiIntegerField(source="rule_id")
    name = serializers.CharField(source="rule.name")
    version = ApiIntegerField()
    action = serializers.CharField(help_text="What it did: retry, forward, mark_failed, discard, hold")
    tries = ApiIntegerField(help_text="Tries its ladder made on the letter's lineage")
    next_at = serializers.DateTimeField(allow_null=True, help_text="When its next try is due")
    held = serializers.BooleanField(help_text="Held for a person: no rule acts on it again")
    note = serializers.CharField(help_text="E.g. that its ladder ran out")


class LetterSerializer(LetterSummarySerializer):
    body = serializers.SerializerMethodField()
    decoded = serializers.SerializerMethodField(help_text="The body read in its format (console.decoders), beside "
                                                          "the stored body; null for JSON, text and unknown bodies")
    lineage = serializers.SerializerMethodField()
    audit = serializers.SerializerMethodField()
    quarantined = serializers.SerializerMethodField(help_text="No rule replays it until a person releases it")
    rule = serializers.SerializerMethodField(help_text="The rule that last acted on the letter's lineage, or null")
    mark = serializers.SerializerMethodField(help_text='Marked "investigating": {owner, ticket, marked_by, '
                                                       "marked_at}, or null")

    class Meta(LetterSummarySerializer.Meta):
        fields = [
            *LetterSummarySerializer.Meta.fields, "exception_stack", "envelope_details", "headers",
            "properties", "body", "decoded", "replayed_to", "replayed_at", "last_job", "capture_job", "lineage",
            "audit", "replay_count", "quarantined", "quarantine_reason", "rule", "mark",
        ]
        read_only_fields = fields

    @extend_schema_field(RuleHandlingSerializer(allow_null=True))
    def get_rule(self, letter: DeadLetter) -> dict | None:
        handling = handling_of(letter)
        if handling is None or handling.rule_id is None:
            return None
        return RuleHandlingSerializer(handling).data

    @extend_schema_field(serializers.DictField(allow_null=True))
    def get_mark(self, letter: DeadLetter) -> dict | None:
        mark = LetterMark.objects.select_related("owner").filter(letter_id=letter.pk).first()
        if mark is None:
            return None
        return {"owner": mark.owner.get_username() if mark.owner else None, "ticket": mark.ticket,
                "marked_by": mark.marked_by, "marked_at": mark.marked_at}

    def get_quarantined(self, letter: DeadLetter) -> bool:
        return letter.quarantined_at is not None

    @extend_schema_field(BodySerializer)
    def get_body(self, letter: DeadLetter) -> dict:
        raw = letter.body_bytes
        try:
            return {"encoding": "text", "text": raw.decode("utf-8")}
        except UnicodeDecodeError:
            return {"encoding": "base64", "base64": base64.b64encode(raw).decode("ascii")}

    @extend_schema_field(DecodedSerializer(allow_null=True))
    def get_decoded(self, letter: DeadLetter) -> dict | None:
        found = reading.read_stored(letter.body_bytes, letter.properties, letter.headers, reading.where_of(letter))
        if found is None:
            return None
        return {"format": found.name, "format_label": found.label, "value": found.value, "error": found.error,
                "unsafe": found.unsafe}

    def _reader(self):
        """Who reads the letter; without a request (a script serializing it) the reader is
        trusted, as string actors are."""
        request = self.context.get("request")
        return request.user if request is not None else "script"

    @extend_schema_field(LineageSerializer)
    def get_lineage(self, letter: DeadLetter) -> dict:
        returns = visible(self._reader(), letter.returns.all())  # a return may have died in another place
        return {"parent": letter.parent_id, "returns": list(returns.order_by("id").values_list("id", flat=True))}

    @extend_schema_field(AuditEventSerializer(many=True))
    def get_audit(self, letter: DeadLetter) -> Any:
        events = visible(self._reader(), AuditEvent.objects.filter(letter_ids__contains=[letter.pk])).order_by("id")
        return AuditEventSerializer(events, many=True, context=self.context).data


class LetterList(generics.ListAPIView):
    """Letters matching the filter, oldest first, without their bodies (see the detail)."""

    serializer_class = LetterSummarySerializer
    pagination_class = KeysetPagination

    @extend_schema(parameters=[*FILTER_PARAMETERS, OpenApiParameter(
        "count", OpenApiTypes.BOOL, description=f"Also count the matching letters (exactly up to {COUNT_CAP:,}): "
                                                "count and count_exact")])
    def get(self, request, *args, **kwargs):
        answer = super().get(request, *args, **kwargs)
        if FlagField(required=False).clean(request.query_params.get("count")) and hasattr(self, "matches"):
            count, exact = capped_count(self.matches.letters)
            answer.data["count"], answer.data["count_exact"] = count, exact and self.matches.complete
        return answer

    def get_queryset(self) -> QuerySet:
        # For a viewer, filters on content find only what the masked letters still show; the
        # page is confirmed from the cursor on, like the place page (visible_matches).
        try:
            self.matches = visible_matches(self.request.user,  # type: ignore[arg-type]  # signed in: a User
                                           self.request.query_params,
                                           visible(self.request.user, DeadLetter.objects.all()),
                                           after=cursor_of(self.request))
        except SelectionError as exc:
            raise ParseError(str(exc)) from None
        # A list of 5 MiB bodies would be slow and useless: fetch only their first bytes.
        head = Substr("body", 1, PREVIEW_BYTES, output_field=BinaryField())
        letters = self.matches.letters
        if redactor_for_request(self.request) is not None:  # a masked preview, from one query for the page
            letters = letters.annotate(preview_head=Substr("body", 1, PREVIEW_SOURCE_BYTES, output_field=BinaryField()))
        return letters.defer("body", "headers", "exception_stack", "envelope_details").annotate(
            body_head=head, in_flight=flying())

    def paginate_queryset(self, queryset):
        rows = super().paginate_queryset(queryset)
        if self.paginator.next_cursor is None and not self.matches.complete:
            self.paginator.next_cursor = self.matches.checked_to  # candidates remain to be confirmed
        # The page's traces as the reader sees them, in one query (its headers are deferred).
        self.traces = shown_traces(redactor_for_request(self.request), rows or [])
        return rows

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "traces": getattr(self, "traces", None)}


class LetterDetail(generics.RetrieveAPIView):
    queryset = DeadLetter.objects.all()  # scope: console.access.api checks the URL's letter
    serializer_class = LetterSerializer
    lookup_url_kwarg = "letter_id"


class LetterMarkInputSerializer(serializers.Serializer):
    owner = serializers.CharField(required=False, allow_blank=True, default="",
                                  help_text="Username (you, when empty)")
    ticket = serializers.CharField(required=False, allow_blank=True, default="", max_length=500,
                                   help_text="An http(s) link to the ticket")
    reason = serializers.CharField(required=False, allow_blank=True, default="")


class LetterMarkView(APIView):
    """Mark the letter "investigating" with an owner and a ticket link (an operator's; audited),
    or take the mark away."""

    @extend_schema(request=LetterMarkInputSerializer, responses={200: LetterSerializer, 400: ErrorSerializer})
    def post(self, request, letter_id: int):
        given = LetterMarkInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        do_mark_letter(letter_id, actor=request.user, **given.validated_data)
        return Response(LetterSerializer(DeadLetter.objects.get(pk=letter_id), context={"request": request}).data)

    @extend_schema(request=None, responses={204: None})
    def delete(self, request, letter_id: int):
        do_unmark_letter(letter_id, actor=request.user, reason=request.query_params.get("reason", ""))
        return Response(status=status.HTTP_204_NO_CONTENT)
