"""The groups-claim mapping through the API (``/api/claim-mappings/``): the same service as the
page (console.services.claim_mappings), the same checks, each change audited."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from console.access.claims import MappingRule, from_file, mapping_rules
from console.access.masking import MaskedSerializer
from console.access.roles import ROLES, WITHHOLDABLE
from console.access.scope import visible
from console.api.errors import ErrorSerializer
from console.models import Broker, ClaimMapping, DeadPlace
from console.services.claim_mappings import do_delete_mapping, do_set_mapping, visible_mappings
from console.services.parsing import ApiIntegerField


class MappingSerializer(MaskedSerializer):
    group = serializers.CharField(help_text="The groups claim's value")
    role = serializers.ChoiceField(choices=list(ROLES))
    limits = serializers.ListField(child=serializers.CharField(),
                                   help_text="Brokers and places the role is limited to (none: unlimited)")
    withhold = serializers.ListField(child=serializers.CharField(), help_text="Rights of the role withheld")
    note = serializers.CharField()
    defined_in = serializers.CharField(help_text='"console #id", or "file" (DLO_OIDC_ROLE_MAPPING)')


class MappingInputSerializer(serializers.Serializer):
    group = serializers.CharField(max_length=255)
    role = serializers.ChoiceField(choices=list(ROLES))
    brokers = serializers.ListField(child=ApiIntegerField(min_value=1, max_value=2**63 - 1), required=False,
                                    default=list, help_text="Limit the role to these brokers")
    places = serializers.ListField(child=ApiIntegerField(min_value=1, max_value=2**63 - 1), required=False,
                                   default=list, help_text="Limit the role to these dead places")
    withhold = serializers.ListField(child=serializers.ChoiceField(choices=list(WITHHOLDABLE)), required=False,
                                     default=list, help_text="Rights of the role withheld from them: export_letters")
    note = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")
    reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")


def _row(mapping: ClaimMapping) -> dict:
    return {"group": mapping.group, "role": mapping.role, "note": mapping.note, "defined_in": f"console #{mapping.pk}",
            "limits": [limit.label for limit in mapping.limits.all()], "withhold": list(mapping.withhold)}


def _file_row(rule: MappingRule) -> dict:
    return {"group": rule.group, "role": rule.role, "note": "", "defined_in": rule.source,
            "withhold": list(rule.withhold),
            "limits": [limit.named if limit.broker_id or limit.place_id
                       else f"{limit.named} (not found: allows nothing)" for limit in rule.limits]}


class MappingList(APIView):
    """The mapping (an admin limited to some places: the mappings within them); POST maps a group
    (replacing its mapping); DELETE removes a group's mapping."""

    @extend_schema(responses=MappingSerializer(many=True))
    def get(self, request):
        rows = ([_file_row(rule) for rule in mapping_rules()] if from_file()
                else [_row(mapping) for mapping in visible_mappings(request.user)])
        return Response(MappingSerializer(rows, many=True).data)

    @extend_schema(request=MappingInputSerializer, responses={200: MappingSerializer, 400: ErrorSerializer})
    def post(self, request):
        given = MappingInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        brokers = list(visible(request.user, Broker.objects.filter(pk__in=data["brokers"])))
        places = list(visible(request.user, DeadPlace.objects.filter(pk__in=data["places"])))
        if len(brokers) != len(set(data["brokers"])) or len(places) != len(set(data["places"])):
            return Response({"detail": "a broker or place named does not exist"}, status=status.HTTP_400_BAD_REQUEST)
        mapping = do_set_mapping(actor=request.user, group=data["group"], role=data["role"], brokers=brokers,
                                 places=places, withhold=data["withhold"], note=data["note"], reason=data["reason"])
        return Response(MappingSerializer(_row(mapping)).data)

    @extend_schema(request=None, responses={204: None, 409: ErrorSerializer}, parameters=[
        OpenApiParameter("group", OpenApiTypes.STR, required=True, description="The group whose mapping goes"),
        OpenApiParameter("reason", OpenApiTypes.STR, description="Why (audited)")])
    def delete(self, request):
        do_delete_mapping(request.query_params.get("group", ""), actor=request.user,
                          reason=request.query_params.get("reason", ""))
        return Response(status=status.HTTP_204_NO_CONTENT)
