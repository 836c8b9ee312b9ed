"""``/api/groups/``: failure groups as the groups pages show them, counted over the letters the
caller may see, with what people decided about each (status, owner, tags) and their notes
(console.services.group_work)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from console.access.masking import MaskedModelSerializer, MaskedSerializer
from console.access.redaction_policy import mask_envelopes
from console.access.scope import visible
from console.api.errors import ErrorSerializer
from console.api.filter_schema import parameters_of
from console.models import DeadLetter, FailureGroupHistory, GroupTriage
from console.services.filtersets import ANY_STATE, GroupFilterSet, group_query
from console.services.group_traces import group_traces
from console.services.group_work import (
    do_add_note,
    do_update_group,
    matching_fingerprints,
    timeline,
    triage,
)
from console.services.group_work import (
    notes as group_notes,
)
from console.services.groups import Among, daily_counts, failure_groups
from console.services.parsing import ApiIntegerField


class GroupSerializer(MaskedSerializer):
    safe_fields = ("fingerprint", "status")  # a hex digest; one of GroupTriage.Status

    fingerprint = serializers.CharField()
    count = ApiIntegerField()
    first_seen = serializers.DateTimeField()
    last_seen = serializers.DateTimeField()
    origins = serializers.ListField(child=serializers.CharField())
    places = serializers.ListField(child=ApiIntegerField())
    exception_type = serializers.CharField()
    exception_message = serializers.CharField()
    sample_id = ApiIntegerField()
    key = serializers.CharField(help_text='What splits it from the other groups of its exception: a body field\'s '
                                          'value, where a body mapping groups by one ($.provider = "stripe"); '
                                          'else empty')
    status = serializers.CharField()
    owner = serializers.CharField(allow_null=True)
    tags = serializers.ListField(child=serializers.CharField())
    ticket = serializers.CharField(help_text="A link to the ticket its owner works in, or empty")


class NoteSerializer(MaskedSerializer):
    author = serializers.CharField()
    text = serializers.CharField()
    at = serializers.DateTimeField()


class GroupDetailSerializer(GroupSerializer):
    notes = NoteSerializer(many=True)
    timeline = serializers.ListField(child=serializers.DictField())
    traces = ApiIntegerField(help_text="Distributed traces its letters you may see failed in (at least, unless "
                                       "traces_exact)")
    traces_exact = serializers.BooleanField()
    daily = serializers.ListField(child=serializers.DictField(), help_text="Its letters per UTC day, the last 30 "
                                                                          "days: {day, letters}")


class GroupChangeSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=GroupTriage.Status.values, required=False)
    owner = serializers.CharField(required=False, allow_null=True, allow_blank=True, help_text="Username, or null")
    tags = serializers.ListField(child=serializers.CharField(max_length=50), required=False, max_length=20)
    ticket = serializers.CharField(required=False, allow_blank=True, max_length=500,
                                   help_text="An http(s) link to the ticket the owner works in; empty for none")
    reason = serializers.CharField(required=False, allow_blank=True, default="")


class NoteInputSerializer(serializers.Serializer):
    text = serializers.CharField(max_length=5000)


def _rows(request, params: dict, fingerprints: list[str] | None = None) -> list[dict]:
    among = Among(request.user, None if fingerprints is None else frozenset(fingerprints))
    groups = failure_groups(params, among)
    mask_envelopes(request.user, groups)
    decided = triage([group.fingerprint for group in groups])
    rows = []
    for group in groups:
        row = decided.get(group.fingerprint)
        rows.append({**group.__dict__, "status": row.status if row else GroupTriage.Status.NEW,
                     "owner": row.owner.get_username() if row and row.owner else None,
                     "tags": row.tags if row else [], "ticket": row.ticket if row else ""})
    return rows


class GroupList(APIView):
    @extend_schema(responses=GroupSerializer(many=True), parameters=parameters_of(GroupFilterSet))
    def get(self, request):
        query = group_query(request.query_params, strict=True)  # the groups page's filter set
        params = {} if query["place"] is None else {"place": query["place"]}
        if query["state"] != ANY_STATE:
            params["state"] = query["state"]
        rows = _rows(request, params)
        if query["status"] or query["owner"] or query["tag"]:
            found, kept = matching_fingerprints(status=query["status"], owner=query["owner"], tag=query["tag"])
            rows = [row for row in rows if (row["fingerprint"] in found) == kept]
        return Response(GroupSerializer(rows, many=True).data)


class GroupDetail(APIView):
    def _detail(self, request, fingerprint: str) -> dict:
        rows = _rows(request, {}, [fingerprint])
        if not rows:
            raise NotFound()
        notes = [{"author": n.author, "text": n.text, "at": n.at} for n in group_notes(fingerprint, request.user)]
        events = [{"at": e.at, "actor": e.actor_name, "action": e.action, "details": e.details}
                  for e in timeline(fingerprint, request.user)]
        traces = group_traces(fingerprint, request.user)
        days = daily_counts({}, [fingerprint], Among(request.user))[fingerprint]
        return {**rows[0], "notes": notes, "timeline": events, "traces": traces.count, "traces_exact": traces.exact,
                "daily": [{"day": day.date().isoformat(), "letters": count} for day, count in days]}

    @extend_schema(responses=GroupDetailSerializer)
    def get(self, request, fingerprint: str):
        return Response(GroupDetailSerializer(self._detail(request, fingerprint)).data)

    @extend_schema(request=GroupChangeSerializer, responses={200: GroupDetailSerializer, 400: ErrorSerializer})
    def patch(self, request, fingerprint: str):
        self._detail(request, fingerprint)  # 404 for a group the caller may not see
        given = GroupChangeSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = dict(given.validated_data)
        do_update_group(fingerprint, actor=request.user, **data)
        return Response(GroupDetailSerializer(self._detail(request, fingerprint)).data)


class GroupNotes(APIView):
    @extend_schema(request=NoteInputSerializer, responses={201: NoteSerializer, 400: ErrorSerializer})
    def post(self, request, fingerprint: str):
        if not visible(request.user, DeadLetter.objects.filter(fingerprint=fingerprint)).exists():
            raise NotFound()  # a group the caller may not see is not there for them, whatever they send
        given = NoteInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        note = do_add_note(fingerprint, actor=request.user, text=given.validated_data["text"])
        return Response(NoteSerializer({"author": note.author, "text": note.text, "at": note.at}).data,
                        status=status.HTTP_201_CREATED)


class HistorySerializer(MaskedModelSerializer):
    safe_fields = ("fingerprint",)

    class Meta:
        model = FailureGroupHistory
        fields = ["fingerprint", "exception_type", "reason", "sample_message", "count", "first_seen", "last_seen",
                  "origins", "brokers", "consumers", "hosts", "computed_at"]
        read_only_fields = fields


class GroupHistory(APIView):
    """Failure groups over the whole history, as the pipeline's ``groups`` job last computed
    them (biggest first). The pipeline counts over every place at once, so a user limited to
    some places gets none (as on the history page)."""

    @extend_schema(responses=HistorySerializer(many=True))
    def get(self, request):
        rows = list(visible(request.user, FailureGroupHistory.objects.all()).order_by("-count", "fingerprint")[:500])
        mask_envelopes(request.user, rows)
        return Response(HistorySerializer(rows, many=True).data)
