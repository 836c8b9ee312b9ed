"""``GET /api/letters/export/``: the letters the caller may see matching the letter filters, as a
file (``format``: jsonl, csv, parquet; console.exports), streamed; ``/api/groups/{fingerprint}/
export/``: a failure group's letters (in any state unless ``state`` says); ``/api/jobs/{id}/export/``:
the letters a job acted on. ``compress=gzip``
sends a ``.gz`` file; a client that accepts gzip gets the stream gzip-encoded. ``meta=1``
answers what the file would carry as its meta (JSON Lines' first line) without the letters.
Masked for the caller, scoped to them and audited (console.services.letter_export)."""

from __future__ import annotations

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.generics import get_object_or_404
from rest_framework.response import Response
from rest_framework.views import APIView

from console.access.scope import visible
from console.api.errors import ErrorSerializer
from console.api.letters import FILTER_PARAMETERS
from console.exports import KINDS
from console.models import DeadLetter, Job
from console.services.audit import letters_of
from console.services.letter_export import described, export_letters

EXPORT_PARAMETERS = [
    OpenApiParameter("format", OpenApiTypes.STR, enum=list(KINDS), description="The file's format"),
    OpenApiParameter("compress", OpenApiTypes.STR, enum=["gzip"], description="A gzip-compressed file (.gz)"),
    OpenApiParameter("meta", OpenApiTypes.BOOL, description="Only the export's meta, as JSON"),
]


class _Export(APIView):
    def perform_content_negotiation(self, request, force=False):
        # ``format`` names the file's format here, not one of DRF's renderers.
        return super().perform_content_negotiation(request, force=True)

    def _answer(self, request, params: dict, what: str, among=None):
        query = request.query_params
        by_encoding = "gzip" in request.headers.get("Accept-Encoding", "")
        as_file = query.get("compress", "") == "gzip"
        if query.get("compress", "") not in ("", "gzip"):
            return Response({"detail": "compress takes gzip"}, status=400)
        format_name = query.get("format", "jsonl")
        if query.get("meta", "") in ("1", "true"):
            return Response(described(request.user, params, format_name=format_name, what=what, among=among))
        export = export_letters(request.user, params, format_name=format_name, gzipped=as_file or by_encoding,
                                what=what, among=among)
        response = StreamingHttpResponse(export.chunks, content_type="application/gzip" if as_file
                                         else export.content_type)
        name = export.name if as_file else export.name.removesuffix(".gz")
        if export.gzipped and not as_file:
            response["Content-Encoding"] = "gzip"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        response["Cache-Control"] = "no-store"
        return response


def _filters(request) -> dict:
    return {key: value for key, value in request.query_params.items() if key not in ("format", "compress", "meta")}


class LetterExport(_Export):
    @extend_schema(parameters=[*EXPORT_PARAMETERS, *FILTER_PARAMETERS],
                   responses={(200, "application/octet-stream"): OpenApiTypes.BINARY, 400: ErrorSerializer})
    def get(self, request):
        return self._answer(request, _filters(request), "letters")


class GroupExport(_Export):
    @extend_schema(parameters=[*EXPORT_PARAMETERS, *FILTER_PARAMETERS],
                   responses={(200, "application/octet-stream"): OpenApiTypes.BINARY, 400: ErrorSerializer})
    def get(self, request, fingerprint: str):
        if not visible(request.user, DeadLetter.objects.filter(fingerprint=fingerprint)).exists():
            raise NotFound()  # no letter of it the caller may see: as if there were no such group
        params = {"state": "any", **_filters(request), "fingerprint": fingerprint}
        return self._answer(request, params, f"group-{fingerprint[:16]}")


class JobExport(_Export):
    """The letters a job acted on (those its audit rows name), in any state unless ``state``
    says; the job's URL is scoped as its page is."""

    @extend_schema(parameters=[*EXPORT_PARAMETERS, *FILTER_PARAMETERS],
                   responses={(200, "application/octet-stream"): OpenApiTypes.BINARY, 400: ErrorSerializer})
    def get(self, request, job_id: int):
        job = get_object_or_404(Job, pk=job_id)
        params = {"state": "any", **_filters(request)}
        return self._answer(request, params, f"job-{job.pk}", among=letters_of(job))
