"""``/api/analytics/``: the failure analytics the analytics page shows (console.services.analytics):
figures over all letters, per failure group and per origin, the busiest names, arrivals by
weekday and hour. A user limited to some places gets none (``limited``: true), as on the page."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from console.access.masking import MaskedSerializer
from console.services.analytics import analytics_for
from console.services.parsing import ApiIntegerField


class OutcomeSerializer(MaskedSerializer):
    safe_fields = ("fingerprint",)

    fingerprint = serializers.CharField(source="stat.fingerprint", help_text="The failure group (groups only)")
    exception_type = serializers.CharField(help_text="The group's sample exception (groups only)")
    broker = serializers.CharField(source="stat.broker", help_text="Broker name (origins only)")
    origin = serializers.CharField(source="stat.origin", help_text="Origin subscription (origins only)")
    letters = ApiIntegerField(source="stat.letters")
    resolved = ApiIntegerField(source="stat.resolved", help_text="Replayed (or moved) or marked failed")
    replayed = ApiIntegerField(source="stat.replayed")
    failed = ApiIntegerField(source="stat.failed")
    came_back = ApiIntegerField(source="stat.came_back", help_text="Replayed and died again")
    stayed_away = ApiIntegerField(source="stat.stayed_away")
    recurrences = ApiIntegerField(source="stat.recurrences",
                                           help_text="Letters that arrived after their group had all been resolved")
    median_minutes = serializers.FloatField(source="stat.median_minutes", allow_null=True,
                                            help_text="Time to resolution from the first failure, median")
    p90_minutes = serializers.FloatField(source="stat.p90_minutes", allow_null=True)
    links = serializers.DictField(child=serializers.CharField(), help_text="Per figure, the letters page behind it")


class BusySerializer(MaskedSerializer):
    name = serializers.CharField()
    broker = serializers.CharField()
    letters = ApiIntegerField()
    groups = ApiIntegerField()
    url = serializers.CharField(help_text="The letters page behind it")


class ArrivalSerializer(MaskedSerializer):
    weekday = ApiIntegerField(help_text="ISO weekday: 1 Monday .. 7 Sunday (UTC)")
    hour = ApiIntegerField(help_text="0-23 (UTC)")
    letters = ApiIntegerField()


class ObjectiveWeekSerializer(MaskedSerializer):
    week = serializers.DateField(help_text="The week's Monday (UTC)")
    known = ApiIntegerField(help_text="Letters captured that week whose outcome is known")
    in_time = ApiIntegerField(help_text="Of those, resolved within the objective's time")
    percent = serializers.FloatField(allow_null=True)


class ObjectiveWeeksSerializer(MaskedSerializer):
    objective = ApiIntegerField(source="objective.pk", help_text="/api/objectives/<id>/")
    name = serializers.CharField(source="objective.name")
    weeks = ObjectiveWeekSerializer(many=True, help_text="The latest first, back as far as the lake goes")


class AnalyticsSerializer(MaskedSerializer):
    limited = serializers.BooleanField(help_text="Your access is limited to some places: nothing is shown")
    computing = serializers.BooleanField(help_text="None computed yet, and a computation is asked for or under way")
    computed_at = serializers.DateTimeField(allow_null=True)
    overall = OutcomeSerializer(allow_null=True)
    groups = OutcomeSerializer(many=True)
    origins = OutcomeSerializer(many=True)
    busiest = serializers.DictField(child=BusySerializer(many=True), help_text="origin, consumer, host")
    arrivals = ArrivalSerializer(many=True)
    objective_weeks = ObjectiveWeeksSerializer(many=True, help_text="Each objective on a place or an origin")


class AnalyticsView(APIView):
    """What became of the letters over the whole history, as the pipeline last computed it."""

    @extend_schema(responses=AnalyticsSerializer)
    def get(self, request):
        found = analytics_for(request.user)
        data = {
            "limited": found.limited, "computing": found.computing, "computed_at": found.computed_at,
            "overall": found.overall,
            "groups": found.groups, "origins": found.origins, "busiest": found.busiest,
            "arrivals": [{"weekday": day, "hour": hour, "letters": count}
                         for (day, hour), count in sorted(found.arrivals.items())],
            "objective_weeks": [{"objective": objective, "weeks": weeks} for objective, weeks in found.objectives],
        }
        return Response(AnalyticsSerializer(data).data)


