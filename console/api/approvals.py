"""``/api/approvals/`` and ``/api/jobs/{id}/approve|refuse/``: the two-person rule over the API.

Self-approval answers 403 (and is audited); a job that no longer waits answers 409.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from console.access.scope import visible
from console.api.errors import ErrorSerializer
from console.api.jobs import JobSerializer
from console.api.keyset import NewestFirstPagination
from console.jobs.door.approvals import do_approve, do_refuse
from console.models import Job


class ApprovalJobSerializer(JobSerializer):
    """A job with its two-person-rule fields."""

    approved_by: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(slug_field="username",
                                                                                read_only=True)
    refused_by: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta(JobSerializer.Meta):
        fields = [*JobSerializer.Meta.fields, "approval_requested", "expires_at", "approved_by", "approved_at",
                  "refused_by", "refused_at"]
        read_only_fields = fields


class ApproveSerializer(serializers.Serializer):
    reason = serializers.CharField(required=False, default="", allow_blank=True, help_text="Why (audited)")


class RefuseSerializer(serializers.Serializer):
    reason = serializers.CharField(help_text="Why the job must not run (audited)")


class ApprovalList(generics.ListAPIView):
    """Jobs waiting for a second person's approval, newest first."""

    serializer_class = ApprovalJobSerializer
    pagination_class = NewestFirstPagination

    def get_queryset(self):
        return visible(self.request.user, Job.objects.filter(status=Job.Status.AWAITING_APPROVAL))


class JobApprove(APIView):
    """Approve a waiting job: it is queued. Its requester cannot (403)."""

    @extend_schema(request=ApproveSerializer,
                   responses={200: ApprovalJobSerializer, 403: ErrorSerializer, 409: ErrorSerializer})
    def post(self, request, job_id: int):
        job = generics.get_object_or_404(Job, pk=job_id)
        given = ApproveSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        job = do_approve(job, actor=request.user, reason=given.validated_data["reason"])
        return Response(ApprovalJobSerializer(job, context={"request": request}).data)


class JobRefuse(APIView):
    """Refuse a waiting job, with a reason: it is cancelled and never runs."""

    @extend_schema(request=RefuseSerializer, responses={200: ApprovalJobSerializer, 409: ErrorSerializer})
    def post(self, request, job_id: int):
        job = generics.get_object_or_404(Job, pk=job_id)
        given = RefuseSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        job = do_refuse(job, actor=request.user, reason=given.validated_data["reason"])
        return Response(ApprovalJobSerializer(job, context={"request": request}).data)
