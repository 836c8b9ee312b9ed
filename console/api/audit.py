"""``/api/audit/``: the audit trail, newest first, and a check of its hash chain."""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from console.access.masking import MaskedModelSerializer, MaskedSerializer
from console.access.scope import scope_of, visible
from console.api.filter_schema import parameters_of
from console.api.keyset import NewestFirstPagination
from console.models import AuditEvent
from console.services.audit import verify_chain
from console.services.filtersets import AuditFilterSet
from console.services.parsing import ApiIntegerField, parsed


class AuditEventSerializer(MaskedModelSerializer):
    safe_fields = ("prev_hash", "hash")  # hex digests the console computes

    actor = serializers.CharField(source="actor_name")
    job = ApiIntegerField(source="job_id", allow_null=True)
    broker = serializers.CharField(source="broker_name")
    place = serializers.CharField(source="place_name")
    letter_ids = serializers.ListField(child=ApiIntegerField())

    class Meta:
        model = AuditEvent
        fields = [
            "id", "at", "actor", "action", "reason", "ticket", "job", "broker", "place", "target",
            "letter_ids", "count", "outcome", "details", "source_ip", "prev_hash", "hash",
        ]
        read_only_fields = fields


class ChainReportSerializer(MaskedSerializer):
    ok = serializers.BooleanField()
    checked = ApiIntegerField(help_text="Events whose hash and link held")
    broken_at = ApiIntegerField(allow_null=True, help_text="First event that does not hold")
    problem = serializers.CharField(allow_blank=True)


def filter_events(events: QuerySet, params) -> QuerySet:
    """``events`` narrowed by the query parameters the list accepts (the audit page's filter set)."""
    return parsed(AuditFilterSet(params, queryset=events)).qs


class AuditList(generics.ListAPIView):
    """Audit events, newest first."""

    serializer_class = AuditEventSerializer
    pagination_class = NewestFirstPagination

    @extend_schema(parameters=parameters_of(AuditFilterSet))
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet:
        return filter_events(visible(self.request.user, AuditEvent.objects.all()), self.request.query_params)


class AuditVerify(APIView):
    """Walk the whole hash chain. A user limited to some places learns whether it holds, how
    many of the events they may see it checked, and where it breaks only if they may see that
    event: nothing about the size or content of the rest."""

    @extend_schema(responses=ChainReportSerializer)
    def get(self, request):
        report = verify_chain()
        answer = {"ok": report.ok, "checked": report.checked, "broken_at": report.broken_at, "problem": report.problem}
        if not scope_of(request.user).unlimited:
            theirs = visible(request.user, AuditEvent.objects.all())
            answer["checked"] = theirs.count()
            if report.broken_at is not None and not theirs.filter(pk=report.broken_at).exists():
                answer.update(broken_at=None, problem="the chain breaks at an event outside what you may see")
        return Response(ChainReportSerializer(answer).data)
