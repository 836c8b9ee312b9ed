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
from console.api.errors import ErrorSerializer
from console.models import BodySchema
from console.services.body_schemas import SchemaError, do_delete_schema, do_upload_schema


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
    registry_id = serializers.IntegerField(
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
        do_delete_schema(generics.get_object_or_404(BodySchema, pk=body_schema_id), actor=request.user,
                         reason=str(request.query_params.get("reason", "")))
        return Response(status=status.HTTP_204_NO_CONTENT)
