"""``/api/objectives/``: the objectives on how long letters wait, on the places, origins and
views the caller may see, each with its state, since when, and the figures it was judged on; set and
deleted by operators (console.services.objectives)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from console.access.masking import MaskedModelSerializer
from console.access.scope import visible
from console.api.errors import ErrorSerializer
from console.models import DeadPlace, Objective, Origin
from console.services.objectives import ObjectiveError, do_delete_objective, do_set_objective, readable_objectives
from console.services.parsing import ApiIntegerField
from console.services.saved_views import readable_views


class ObjectiveSerializer(MaskedModelSerializer):
    owner = serializers.CharField(source="owner.get_username", default=None, read_only=True)

    class Meta:
        model = Objective
        fields = ["id", "name", "place", "origin", "view", "kind", "seconds", "percent", "owner", "state",
                  "state_since", "evaluated_at", "oldest_age_seconds", "attainment_7d", "attainment_30d",
                  "attainment_at", "created_by", "created_at"]
        read_only_fields = fields


class ObjectiveInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    place = ApiIntegerField(required=False, allow_null=True, default=None, min_value=1, max_value=2**63 - 1,
                            help_text="The dead place's id (one of place, origin and view)")
    origin = ApiIntegerField(required=False, allow_null=True, default=None, min_value=1, max_value=2**63 - 1,
                             help_text="The origin's id (/api/origins/)")
    view = ApiIntegerField(required=False, allow_null=True, default=None, min_value=1, max_value=2**63 - 1,
                           help_text="A saved view's id (/api/views/): judged over all its letters, set by people "
                                     "without limits")
    kind = serializers.ChoiceField(choices=Objective.Kind.values, help_text="oldest: no letter waits longer than "
                                   "seconds; resolved: percent of the letters resolved within seconds")
    seconds = ApiIntegerField(min_value=1, max_value=366 * 86400, help_text="D")
    percent = serializers.FloatField(required=False, allow_null=True, default=None, min_value=0, max_value=100,
                                     help_text="P, for resolved")
    owner = serializers.CharField(required=False, allow_blank=True, default="", help_text="Username (you by default)")
    reason = serializers.CharField(required=False, allow_blank=True, default="")


class ObjectiveList(APIView):
    @extend_schema(responses=ObjectiveSerializer(many=True))
    def get(self, request):
        objectives = readable_objectives(request.user).select_related("owner")
        return Response(ObjectiveSerializer(objectives, many=True).data)

    @extend_schema(request=ObjectiveInputSerializer, responses={201: ObjectiveSerializer, 400: ErrorSerializer})
    def post(self, request):
        given = ObjectiveInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = dict(given.validated_data)
        place = origin = view = None
        if data["place"] is not None:
            place = visible(request.user, DeadPlace.objects.filter(pk=data["place"])).first()
            if place is None:
                raise ObjectiveError(f"no dead place {data['place']}")
        if data["origin"] is not None:
            origin = visible(request.user, Origin.objects.filter(pk=data["origin"])).first()
            if origin is None:
                raise ObjectiveError(f"no origin {data['origin']}")
        if data["view"] is not None:
            view = readable_views(request.user).filter(pk=data["view"]).first()
            if view is None:
                raise ObjectiveError(f"no view {data['view']}")
        objective = do_set_objective(actor=request.user, name=data["name"], kind=data["kind"],
                                     seconds=data["seconds"], percent=data["percent"], place=place, origin=origin,
                                     view=view, owner=data["owner"], reason=data["reason"])
        return Response(ObjectiveSerializer(objective).data, status=status.HTTP_201_CREATED)


class ObjectiveDetail(APIView):
    @extend_schema(responses=ObjectiveSerializer)
    def get(self, request, objective_id: int):
        return Response(ObjectiveSerializer(generics.get_object_or_404(
            readable_objectives(request.user), pk=objective_id)).data)

    @extend_schema(request=None, responses={204: None})
    def delete(self, request, objective_id: int):
        objective = generics.get_object_or_404(readable_objectives(request.user), pk=objective_id)
        do_delete_objective(objective, actor=request.user, reason=request.query_params.get("reason", ""))
        return Response(status=status.HTTP_204_NO_CONTENT)
