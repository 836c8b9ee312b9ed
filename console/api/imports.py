"""``POST /api/imports/?broker=<id>&place=<name>&reason=...``: a JSON Lines export of another
console, sent as the request's body (read line by line as it streams), taken into custody in the
imported place ``place`` of that broker, from which its letters replay to their origins there
(console.services.letter_import). Answers how many letters went in and which lines were refused
and why."""

from __future__ import annotations

import io

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.generics import get_object_or_404
from rest_framework.parsers import BaseParser
from rest_framework.response import Response
from rest_framework.views import APIView

from console.access.masking import MaskedSerializer
from console.access.scope import visible
from console.api.errors import ErrorSerializer
from console.models import Broker
from console.services.letter_import import do_import
from console.services.parsing import ApiIntegerField


class ImportQuerySerializer(serializers.Serializer):
    broker = ApiIntegerField(min_value=1, max_value=2**63 - 1, help_text="The broker the letters replay to")
    place = serializers.CharField(max_length=500, help_text="The imported place's name (made when new)")
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)
    file_name = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)


class BadLineSerializer(MaskedSerializer):
    line = ApiIntegerField()
    error = serializers.CharField()


class ImportedSerializer(MaskedSerializer):
    safe_fields = ("sha256",)

    place = ApiIntegerField()
    imported = ApiIntegerField()
    masked = ApiIntegerField(help_text="Letters a masked reader exported: quarantined until an admin releases them")
    bad_lines = ApiIntegerField()
    refused = BadLineSerializer(many=True, help_text="The first refused lines, with their numbers and why")
    sha256 = serializers.CharField()
    exported_by = serializers.CharField()


class JsonLinesStream(BaseParser):
    """A JSON Lines body left as the stream it is: the import reads it line by line."""

    media_type = "application/jsonl"

    def parse(self, stream, media_type=None, parser_context=None):
        return stream if stream is not None else io.BytesIO()


class NdjsonStream(JsonLinesStream):
    media_type = "application/x-ndjson"


class ImportList(APIView):
    parser_classes = [JsonLinesStream, NdjsonStream]

    @extend_schema(parameters=[ImportQuerySerializer], request={"application/jsonl": OpenApiTypes.BINARY},
                   responses={201: ImportedSerializer, 400: ErrorSerializer})
    def post(self, request):
        query = ImportQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        given = query.validated_data
        broker = get_object_or_404(visible(request.user, Broker.objects.all()), pk=given["broker"])
        result = do_import(request.data, actor=request.user, broker=broker, place_name=given["place"],
                           reason=given["reason"], file_name=given["file_name"])
        return Response(ImportedSerializer({
            "place": result.place.pk, "imported": result.imported, "masked": result.masked,
            "bad_lines": result.bad_count, "refused": [{"line": n, "error": e} for n, e in result.bad],
            "sha256": result.sha256, "exported_by": result.exported_by}).data, status=status.HTTP_201_CREATED)
