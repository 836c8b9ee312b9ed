"""The safeguards on automation: releasing a quarantined letter, origins with their breaker,
streak and effective policy, and closing a breaker (console.services.safeguards)."""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from console.access.masking import MaskedModelSerializer, MaskedSerializer
from console.access.redaction_policy import mask_origins
from console.access.scope import visible
from console.api.errors import ErrorSerializer
from console.api.filter_schema import parameters_of
from console.api.letters import LetterSerializer
from console.models import DeadLetter, Origin
from console.services.filtersets import OriginFilterSet
from console.services.parsing import ApiIntegerField, parsed
from console.services.policy import effective_policies
from console.services.safeguards import do_close_breaker, do_release


class ReasonSerializer(serializers.Serializer):
    reason = serializers.CharField(help_text="Why (audited)")


class StreakSerializer(MaskedSerializer):
    exception = serializers.CharField(source="streak_exception",
                                      help_text="Exception type of the latest letters in a row")
    same = ApiIntegerField(source="streak_same", help_text="Letters in a row with that exception")
    any = ApiIntegerField(source="streak_any", help_text="Letters in a row with any exception")
    last_arrival_at = serializers.DateTimeField(allow_null=True)


class OriginSerializer(MaskedModelSerializer):
    broker_name = serializers.CharField(source="broker.name", read_only=True)
    breaker_open = serializers.BooleanField(read_only=True)
    streak = StreakSerializer(source="*", read_only=True)
    policy = serializers.SerializerMethodField(help_text="The effective policy in plain words: what the broker "
                                               "does with a message that keeps failing, then the rules")

    class Meta:
        model = Origin
        fields = ["id", "broker", "broker_name", "scope", "name", "breaker_open", "breaker_opened_at",
                  "breaker_reason", "streak", "policy"]
        read_only_fields = fields

    def get_policy(self, origin: Origin) -> str:
        policies = self.context.get("policies")
        if policies is not None:
            return policies[origin.pk]
        return effective_policies([origin], reader=self.context["request"].user)[origin.pk]


class OriginList(generics.ListAPIView):
    """Origins letters died in, each with its breaker, streak and effective policy (read from the
    broker on each request)."""

    serializer_class = OriginSerializer

    @extend_schema(parameters=parameters_of(OriginFilterSet))
    def get(self, request, *args, **kwargs):
        origins = list(self.get_queryset())
        mask_origins(request.user, origins)
        context = {**self.get_serializer_context(), "policies": effective_policies(origins, reader=request.user)}
        return Response(OriginSerializer(origins, many=True, context=context).data)

    def get_queryset(self) -> QuerySet:
        origins = visible(self.request.user, Origin.objects.select_related("broker"))
        return parsed(OriginFilterSet(self.request.query_params, queryset=origins)).qs


class OriginCloseBreaker(APIView):
    """Close the origin's open breaker (audited): rules may replay to it again. 400 when it is not open."""

    @extend_schema(request=ReasonSerializer, responses={200: OriginSerializer, 400: ErrorSerializer})
    def post(self, request, origin_id: int):
        origin = generics.get_object_or_404(Origin.objects.select_related("broker"), pk=origin_id)
        given = ReasonSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        origin = do_close_breaker(origin, actor=request.user, reason=given.validated_data["reason"])
        mask_origins(request.user, [origin])
        return Response(OriginSerializer(origin, context={"request": request}).data)


class LetterRelease(APIView):
    """Release a quarantined letter (audited): rules may replay it again. 400 when it is not quarantined."""

    @extend_schema(request=ReasonSerializer, responses={200: LetterSerializer, 400: ErrorSerializer})
    def post(self, request, letter_id: int):
        letter = generics.get_object_or_404(DeadLetter, pk=letter_id)
        given = ReasonSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        letter = do_release(letter, actor=request.user, reason=given.validated_data["reason"])
        return Response(LetterSerializer(letter, context={"request": request}).data)
