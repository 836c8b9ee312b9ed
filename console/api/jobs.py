"""``/api/jobs/``: start the jobs offered on a selection of letters (replay, move, mark failed,
purge: console.jobs.kinds, through console.jobs.door.requests), preview them, follow and steer them.

The request's fields beyond the letters, reason and ticket are what those kinds ask for
(console.jobs.kinds.base.Ask), so a new kind's fields and action appear here, and in the
schema, without an edit."""

from __future__ import annotations

from typing import ClassVar

from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from console.access.masking import MaskedModelSerializer, MaskedSerializer
from console.access.scope import visible
from console.api.errors import ErrorSerializer
from console.api.keyset import NewestFirstPagination
from console.jobs.door.requests import request_job
from console.jobs.door.steering import do_cancel_job, do_pause_job, do_resume_job
from console.jobs.kinds import kind, offered
from console.jobs.kinds.base import SELECTION, Ask
from console.models import Job
from console.services.jobs import preview
from console.services.parsing import ApiIntegerField
from console.services.selection import FILTER_KEYS


class ParamField(serializers.ReadOnlyField):
    """One of the kind's parameters at the top level of a job's answer, where scripts read it
    from before parameters moved into ``params``; ``empty`` when the kind does not set it."""

    def __init__(self, empty=None, **kwargs) -> None:
        super().__init__(source="params", **kwargs)
        self.empty = empty

    def to_representation(self, params):
        return (params or {}).get(self.field_name, self.empty)


class JobSerializer(MaskedModelSerializer):
    actor = serializers.CharField(source="actor_name", read_only=True)
    percent = ApiIntegerField(read_only=True)
    params = serializers.JSONField(read_only=True, help_text="The kind's parameters, as asked for")
    target = ParamField("", help_text="Destination queue of a move or shovel")
    rate_limit = ParamField()
    concurrency = ParamField(1)
    canary_size = ParamField()
    canary_wait_seconds = ParamField()
    return_threshold = ParamField()

    class Meta:
        model = Job
        fields = [
            "id", "kind", "status", "actor", "reason", "ticket", "place", "params", "target", "selection",
            "per_place", "expected", "rate_limit", "concurrency", "canary_size", "canary_wait_seconds",
            "return_threshold", "watch", "pause_reason", "total", "done", "failed", "skipped", "returned",
            "percent", "cursor", "cancel_requested", "pause_requested", "log", "error",
            "created_at", "started_at", "finished_at", "heartbeat_at",
        ]
        read_only_fields = fields


class SelectionSerializer(serializers.Serializer):
    """Which letters: explicit ids, or a filter frozen at the highest id that exists now."""

    letters = serializers.ListField(child=ApiIntegerField(min_value=1), required=False,
                                    allow_empty=False, help_text="Letter ids")
    filter = serializers.DictField(child=serializers.CharField(allow_blank=True), required=False,
                                   help_text=f"Letter filter; keys: {', '.join(FILTER_KEYS)}")

    def validate_filter(self, value: dict) -> dict:
        # An unknown key would otherwise be dropped, widening the selection to more letters
        # than the operator meant.
        unknown = sorted(set(value) - set(FILTER_KEYS))
        if unknown:
            raise serializers.ValidationError(
                f"unknown filter keys: {', '.join(unknown)}; known: {', '.join(FILTER_KEYS)}"
            )
        return value


def serializer_field(ask: Ask, *, required: bool = False) -> serializers.Field:
    """The API's field for one thing a kind asks for. ``required`` where the serializer serves
    that one kind and the kind requires it (a place's shovel); the one serializer of every
    action on letters requires none (the chosen kind refuses what it misses)."""
    if ask.type is int:
        return ApiIntegerField(required=required, allow_null=ask.nullable and not required,
                               min_value=ask.min_value, max_value=ask.max_value, help_text=ask.help)
    if ask.type is float:
        return serializers.FloatField(required=required, allow_null=ask.nullable and not required,
                                      min_value=ask.min_value, max_value=ask.max_value, help_text=ask.help)
    if required:
        return serializers.CharField(max_length=ask.max_length, help_text=ask.help)
    return serializers.CharField(required=False, default="", allow_blank=True, max_length=ask.max_length,
                                 help_text=ask.help)


class KindSerializer(serializers.Serializer):
    """A request for one kind of job: what the kind asks for (console.jobs.kinds), then the
    fields the subclass declares (its reason, ticket)."""

    kind_name: ClassVar[str]

    def get_fields(self) -> dict[str, serializers.Field]:
        asks = {ask.name: serializer_field(ask, required=ask.required) for ask in kind(self.kind_name).asks}
        return {**asks, **super().get_fields()}


def selection_asks() -> list[Ask]:
    """What the kinds offered on a selection ask for, each name once, in the registry's order."""
    asks: dict[str, Ask] = {}
    for each in offered(SELECTION):
        for ask in each.asks:
            asks.setdefault(ask.name, ask)
    return list(asks.values())


class JobCreateSerializer(SelectionSerializer):
    """A job on letters: the action (a kind offered on a selection), the reason, and what the
    kinds ask for (read from the registry each time, so a registered kind is taken at once)."""

    reason = serializers.CharField(help_text="Why (audited)")
    ticket = serializers.CharField(required=False, default="", allow_blank=True, max_length=200)
    selection = serializers.JSONField(required=False, help_text="A frozen selection, as /api/jobs/preview/ "
                                                                "answered it: exactly the letters previewed")

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        fields["action"] = serializers.ChoiceField(choices=[each.name for each in offered(SELECTION)])
        for ask in selection_asks():
            fields[ask.name] = serializer_field(ask)
        return fields


class OriginCountSerializer(MaskedSerializer):
    broker = serializers.CharField(source="broker__name")
    origin_queue = serializers.CharField()
    count = ApiIntegerField()


class PreviewSerializer(MaskedSerializer):
    selection = serializers.JSONField(help_text="The frozen selection a job would act on")
    count = ApiIntegerField()
    by_origin = OriginCountSerializer(many=True)
    sample = serializers.ListField(child=ApiIntegerField(), help_text="A few letter ids")
    arrived_since = ApiIntegerField(help_text="Matching letters newer than the frozen selection")


class ControlSerializer(serializers.Serializer):
    reason = serializers.CharField(required=False, default="", allow_blank=True)


class JobList(generics.ListAPIView):
    """Jobs, newest first."""

    serializer_class = JobSerializer
    pagination_class = NewestFirstPagination

    def get_queryset(self):
        return visible(self.request.user, Job.objects.all())

    @extend_schema(request=JobCreateSerializer, responses={202: JobSerializer, 400: ErrorSerializer})
    def post(self, request):
        given = JobCreateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        job = request_job(
            data["action"], actor=request.user, reason=data["reason"], ticket=data["ticket"],
            ids=data.get("letters"), filter=data.get("filter"), selection=data.get("selection"),
            **{ask.name: data.get(ask.name) for ask in selection_asks()},
        )
        return Response(JobSerializer(job, context={"request": request}).data, status=status.HTTP_202_ACCEPTED)


class JobPreview(APIView):
    @extend_schema(request=SelectionSerializer, responses={200: PreviewSerializer, 400: ErrorSerializer})
    def post(self, request):
        given = SelectionSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        result = preview(actor=request.user, ids=given.validated_data.get("letters"),
                         filter=given.validated_data.get("filter"))
        return Response(PreviewSerializer(result).data)


class JobDetail(generics.RetrieveAPIView):
    queryset = Job.objects.all()
    serializer_class = JobSerializer
    lookup_url_kwarg = "job_id"


class JobControl(APIView):
    """Base of cancel, pause and resume: one service call, 409 when the job's state forbids it."""

    control = staticmethod(do_cancel_job)

    @extend_schema(request=ControlSerializer, responses={200: JobSerializer, 409: ErrorSerializer})
    def post(self, request, job_id: int):
        job = generics.get_object_or_404(Job, pk=job_id)
        given = ControlSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        job = self.control(job, actor=request.user, reason=given.validated_data["reason"])
        return Response(JobSerializer(job, context={"request": request}).data)


class JobCancel(JobControl):
    """Stop after the current batch; a queued or paused job stops at once."""

    control = staticmethod(do_cancel_job)


class JobPause(JobControl):
    control = staticmethod(do_pause_job)


class JobResume(JobControl):
    control = staticmethod(do_resume_job)
