"""``/api/body-schemas/``: what bodies written with a schema are read with (Protobuf descriptor
sets, Avro schemas), through console.services.body_schemas: listed for anyone signed in, uploaded and deleted
by an admin, audited."""

from __future__ import annotations

import base64
import binascii

from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from console.access.masking import MaskedModelSerializer, MaskedSerializer
from console.access.scope import visible
from console.api.errors import ErrorSerializer
from console.models import BodyMapping, BodySchema, DeadPlace
from console.services.body_schemas import (
    SchemaError,
    changeable_schemas,
    do_create_mapping,
    do_delete_mapping,
    do_delete_schema,
    do_upload_schema,
    visible_mappings,
)
from console.services.parsing import ApiIntegerField


class BodySchemaSerializer(MaskedModelSerializer):
    safe_fields = ("kind", "sha256", "uploaded_at", "registry_id")

    class Meta:
        model = BodySchema
        fields = ["id", "kind", "name", "sha256", "declares", "registry_id", "uploaded_by", "uploaded_at"]
        read_only_fields = fields


class UploadSerializer(MaskedSerializer):
    kind = serializers.ChoiceField(choices=BodySchema.Kind.choices)
    name = serializers.CharField(max_length=200)
    base64 = serializers.CharField(help_text="The file, base64: a descriptor set (protoc --include_imports "
                                             "--descriptor_set_out=f.pb), or an Avro schema (.avsc)")
    registry_id = ApiIntegerField(
        required=False, allow_null=True, default=None, min_value=0, max_value=2**32 - 1,
        help_text="Avro: the schema registry's id of the schema (Confluent's wire format names it)")
    reason = serializers.CharField(required=False, allow_blank=True, default="")


class BodySchemaList(APIView):
    @extend_schema(responses=BodySchemaSerializer(many=True))
    def get(self, request):
        return Response(BodySchemaSerializer(BodySchema.objects.all(), many=True,
                                             context={"request": request}).data)

    @extend_schema(request=UploadSerializer, responses={201: BodySchemaSerializer, 400: ErrorSerializer})
    def post(self, request):
        given = UploadSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            data = base64.b64decode(given.validated_data["base64"], validate=True)
        except (binascii.Error, ValueError):
            raise SchemaError("base64 is not valid base64") from None
        schema = do_upload_schema(actor=request.user, kind=given.validated_data["kind"],
                                  name=given.validated_data["name"], data=data,
                                  reason=given.validated_data["reason"],
                                  registry_id=given.validated_data["registry_id"])
        return Response(BodySchemaSerializer(schema, context={"request": request}).data,
                        status=status.HTTP_201_CREATED)


class BodySchemaDetail(APIView):
    @extend_schema(request=None, responses={204: None})
    def delete(self, request, body_schema_id: int):
        do_delete_schema(generics.get_object_or_404(changeable_schemas(request.user), pk=body_schema_id),
                         actor=request.user, reason=str(request.query_params.get("reason", "")))
        return Response(status=status.HTTP_204_NO_CONTENT)


class BodyMappingSerializer(MaskedModelSerializer):
    safe_fields = ("format", "place", "created_at")

    class Meta:
        model = BodyMapping
        fields = ["id", "place", "origin", "header", "header_value", "format", "message_type", "group_path",
                  "created_by", "created_at"]
        read_only_fields = fields


class BodyMappingInputSerializer(MaskedSerializer):
    place = ApiIntegerField(required=False, allow_null=True, default=None, min_value=1, max_value=2**63 - 1,
                                     help_text="A dead place's id: its letters' bodies")
    origin = serializers.CharField(required=False, allow_blank=True, default="", max_length=500,
                                   help_text="An origin queue: the bodies of letters that died from it")
    header = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    header_value = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)
    format = serializers.CharField(required=False, allow_blank=True, default="",
                                   help_text="A body format: msgpack, cbor, protobuf, avro, xml, pickle (blank: as "
                                             "the letters say, for a mapping that only groups)")
    message_type = serializers.CharField(required=False, allow_blank=True, default="", max_length=500,
                                         help_text="Protobuf: the message type; Avro: the schema's full name")
    group_path = serializers.CharField(required=False, allow_blank=True, default="", max_length=500,
                                       help_text="A JSON path into the bodies as read ($.provider): the value there "
                                                 "splits their failure groups")
    reason = serializers.CharField(required=False, allow_blank=True, default="")


class BodyMappingList(APIView):
    """Which format (and message type) the bodies of a place, an origin or a header value are
    in, where the letters do not say it themselves, and by which body field their failure
    groups split."""

    @extend_schema(responses=BodyMappingSerializer(many=True))
    def get(self, request):
        return Response(BodyMappingSerializer(visible_mappings(request.user), many=True,
                                              context={"request": request}).data)

    @extend_schema(request=BodyMappingInputSerializer, responses={201: BodyMappingSerializer, 400: ErrorSerializer})
    def post(self, request):
        given = BodyMappingInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = dict(given.validated_data)
        place_id = data.pop("place")
        place = None if place_id is None else generics.get_object_or_404(
            visible(request.user, DeadPlace.objects.all()), pk=place_id)
        mapping = do_create_mapping(actor=request.user, place=place, **data)
        return Response(BodyMappingSerializer(mapping, context={"request": request}).data,
                        status=status.HTTP_201_CREATED)


class BodyMappingDetail(APIView):
    @extend_schema(request=None, responses={204: None})
    def delete(self, request, body_mapping_id: int):
        do_delete_mapping(generics.get_object_or_404(visible_mappings(request.user), pk=body_mapping_id),
                          actor=request.user, reason=str(request.query_params.get("reason", "")))
        return Response(status=status.HTTP_204_NO_CONTENT)
