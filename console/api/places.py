"""``/api/places/``: dead places with their depth and custody counts, capture, and moving a whole
place on the broker (shovel)."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Q, QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from console.access.masking import MaskedModelSerializer
from console.access.scope import visible
from console.api.errors import ErrorSerializer
from console.api.filter_schema import parameters_of
from console.api.jobs import JobSerializer, KindSerializer
from console.jobs.door.requests import request_job
from console.models import DeadPlace, LetterState
from console.services.filtersets import PlaceFilterSet
from console.services.keeping import do_keep
from console.services.parsing import ApiIntegerField, parsed


def places_with_custody() -> QuerySet:
    """Places with ``held``: how many of their letters the console holds now."""
    return DeadPlace.objects.select_related("broker").annotate(
        held=Count("letters", filter=Q(letters__state=LetterState.HELD))
    )


class PlaceSerializer(MaskedModelSerializer):
    broker_name = serializers.CharField(source="broker.name", read_only=True)
    held = ApiIntegerField(read_only=True, help_text="Letters of this place held in custody")

    class Meta:
        model = DeadPlace
        fields = [
            "id", "broker", "broker_name", "name", "scope", "kind", "discovered_by", "origins",
            "details", "depth", "oldest_at", "consumers", "held", "last_seen_at", "gone", "keep_in_custody",
        ]
        read_only_fields = fields


class KeepSerializer(serializers.Serializer):
    keep_in_custody = serializers.BooleanField(help_text="Drain the place continuously: its letters are in custody "
                                               "seconds after they die")
    reason = serializers.CharField(required=False, default="", allow_blank=True,
                                   help_text="Why (audited; a default names the API when left out)")


class CaptureSerializer(KindSerializer):
    kind_name = "capture"
    reason = serializers.CharField(help_text="Why the letters are taken into custody (audited)")


class ShovelSerializer(KindSerializer):
    kind_name = "shovel"
    reason = serializers.CharField(help_text="Why the queue is moved (audited)")
    ticket = serializers.CharField(required=False, default="", allow_blank=True, max_length=200)


class PlaceList(generics.ListAPIView):
    serializer_class = PlaceSerializer

    @extend_schema(parameters=parameters_of(PlaceFilterSet))
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet:
        places = visible(self.request.user, places_with_custody())
        return parsed(PlaceFilterSet(self.request.query_params, queryset=places)).qs


class PlaceDetail(generics.RetrieveAPIView):
    """A dead place; PATCH sets whether it is kept in custody (audited ``place.keep``)."""

    serializer_class = PlaceSerializer
    lookup_url_kwarg = "place_id"

    def get_queryset(self) -> QuerySet:
        return places_with_custody()

    @extend_schema(request=KeepSerializer, responses={200: PlaceSerializer, 400: ErrorSerializer})
    def patch(self, request, place_id: int):
        place = self.get_object()
        given = KeepSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        keep = given.validated_data["keep_in_custody"]
        reason = given.validated_data["reason"] or f"keep_in_custody set to {str(keep).lower()} through the API"
        do_keep(place, keep, actor=request.user, reason=reason)
        return Response(PlaceSerializer(self.get_object()).data)


class PlaceJob(APIView):
    """Base of the jobs on a whole place: one request, 202 with the job, 400 with the refusal."""

    given: type[serializers.Serializer[Any]] = CaptureSerializer
    kind = "capture"

    def start_job(self, request, place_id: int) -> Response:
        place = generics.get_object_or_404(DeadPlace.objects.select_related("broker"), pk=place_id)
        given = self.given(data=request.data)
        given.is_valid(raise_exception=True)
        job = request_job(self.kind, place=place, actor=request.user, **given.validated_data)
        return Response(JobSerializer(job, context={"request": request}).data, status=status.HTTP_202_ACCEPTED)


class PlaceCapture(PlaceJob):
    @extend_schema(request=CaptureSerializer, responses={202: JobSerializer, 400: ErrorSerializer})
    def post(self, request, place_id: int):
        return self.start_job(request, place_id)


class PlaceShovel(PlaceJob):
    """Have the broker move everything the place holds to another queue by itself (RabbitMQ's
    shovel); the job verifies the move by counting both queues. Refused (400) where the broker
    cannot, or when the target is the place itself or no existing queue."""

    given = ShovelSerializer
    kind = "shovel"

    @extend_schema(request=ShovelSerializer, responses={202: JobSerializer, 400: ErrorSerializer})
    def post(self, request, place_id: int):
        return self.start_job(request, place_id)
