"""Redaction for the REST API: serializer mixins that mask what a viewer is sent."""

from __future__ import annotations

from console.access.redaction import Redactor, for_user, masked_preview

_NO_REDACTOR = object()


def request_redactor(serializer) -> Redactor | None:
    """The redactor for the requesting user (None: unmasked), computed once per response."""
    context = serializer.context
    cached = context.get("_redactor", _NO_REDACTOR)
    if cached is _NO_REDACTOR:
        request = context.get("request")
        cached = for_user(getattr(request, "user", None)) if request is not None else Redactor.current()
        context["_redactor"] = cached
    return cached


class RedactedLetterMixin:
    """Masks a letter's preview, body, headers, properties, envelope and audit trail for viewers."""

    def to_representation(self, letter):
        data = super().to_representation(letter)
        redactor = request_redactor(self)
        if redactor is None:
            return data
        data = redactor.envelope(data)
        if "preview" in data:
            head = letter.body_bytes if "body" in data else _full_head(letter)
            data["preview"] = masked_preview(redactor, head, letter.body_size)
        if "body" in data:
            masked = redactor.body(letter.body_bytes)
            data["body"] = ({"encoding": "hidden"} if masked is None
                            else {"encoding": "text", "text": masked.decode("utf-8")})
        for name in ("headers", "properties"):
            if name in data:
                data[name] = redactor.value(data[name])
        if "audit" in data:
            data["audit"] = [redactor.event_row(row) for row in data["audit"]]
        return data


def _full_head(letter) -> bytes:
    from django.db.models import BinaryField
    from django.db.models.functions import Substr

    from console.access.redaction import PREVIEW_SOURCE_BYTES
    from console.models import DeadLetter

    head = (DeadLetter.objects.filter(pk=letter.pk)
            .annotate(head=Substr("body", 1, PREVIEW_SOURCE_BYTES, output_field=BinaryField()))
            .values_list("head", flat=True).first())
    return bytes(head or b"")


class RedactedJobMixin:
    """Masks a job's typed texts, filter and log for viewers (jobs and approvals)."""

    def to_representation(self, job):
        data = super().to_representation(job)
        redactor = request_redactor(self)
        return data if redactor is None else redactor.job_fields(data)


class RedactedEventMixin:
    """Masks an audit event's reason and details for viewers."""

    def to_representation(self, event):
        data = super().to_representation(event)
        redactor = request_redactor(self)
        return data if redactor is None else redactor.event_row(data)
