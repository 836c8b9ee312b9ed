"""``POST /api/letters/{id}/edit-replay/``: replay an edited copy of one letter (the page's
"edit and replay"), a job of kind edit_replay (console.jobs.kinds.edit_replay), which keeps the diff in the audit."""

from __future__ import annotations

import base64
import binascii

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from console.access.scope import visible
from console.api.errors import ErrorSerializer
from console.api.jobs import JobSerializer
from console.decoders.reading import where_of, written
from console.jobs.door.requests import request_job
from console.models import DeadLetter
from console.services.edit import tagged_headers


@extend_schema_field(OpenApiTypes.ANY)
class BodyField(serializers.Field):
    """A body as text (UTF-8), or ``{"base64": "..."}`` for any bytes."""

    def to_internal_value(self, data) -> bytes:
        if isinstance(data, str):
            return data.encode("utf-8")
        if isinstance(data, dict) and set(data) == {"base64"} and isinstance(data["base64"], str):
            try:
                return base64.b64decode(data["base64"], validate=True)
            except (ValueError, binascii.Error):
                raise serializers.ValidationError("base64 does not decode") from None
        raise serializers.ValidationError('give text, or {"base64": "..."}')


class EditReplaySerializer(serializers.Serializer):
    body = BodyField(required=False, help_text='The edited body: text, or {"base64": "..."}')
    decoded = serializers.JSONField(
        required=False, help_text="Instead of body, for a body the console reads in its format (the letter's "
                                  "`decoded`: MessagePack, CBOR, Protobuf, Avro): the edited value, written back "
                                  "in the same format, message type and schema; 400 naming the field that does "
                                  "not fit")
    headers = serializers.DictField(
        required=False, help_text="All headers of the copy, tagged JSON ($bytes, $ts, $decimal, $str, $float); "
                                  "left out: the letter's own headers")
    reason = serializers.CharField(help_text="Why (audited)")
    ticket = serializers.CharField(required=False, default="", allow_blank=True, max_length=200)

    def validate(self, attrs):
        if ("body" in attrs) == ("decoded" in attrs):
            raise serializers.ValidationError("give the edited body, or its decoded value (one of the two)")
        return attrs


class LetterEditReplay(APIView):
    """A copy of the letter with this body and these headers is replayed to its origin; the
    letter itself is kept as it was and marked failed. Answers the copy's replay job."""

    #: A message's body and headers may hold NUL characters: the copy keeps them exactly
    #: (console.api.parsers; the headers are stored escaped).
    json_may_hold_nul = ("body", "headers", "decoded")

    @extend_schema(request=EditReplaySerializer, responses={202: JobSerializer, 400: ErrorSerializer})
    def post(self, request, letter_id: int):
        letter = generics.get_object_or_404(DeadLetter, pk=letter_id)
        given = EditReplaySerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        headers = tagged_headers(data["headers"]) if "headers" in data else letter.headers
        if "body" in data:
            body = data["body"]
        else:  # read only as its reader may: a letter outside their places is not found
            letter = generics.get_object_or_404(visible(request.user, DeadLetter.objects.all()), pk=letter_id)
            body = written(data["decoded"], letter.body_bytes, letter.properties, letter.headers, where_of(letter))
        job = request_job("edit_replay", letter=letter, body=body, headers=headers,
                          actor=request.user, reason=data["reason"], ticket=data["ticket"])
        return Response(JobSerializer(job, context={"request": request}).data, status=status.HTTP_202_ACCEPTED)
