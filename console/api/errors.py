"""The error answers the API gives besides DRF's own, and their schema.

Every refusal of the services (console.refusals.Refusal and its kinds: JobError, RuleError,
GroupError, OutOfScope...) is mapped here, once, to the status its class names, so views do not
catch them one by one: a view calls its service and lets a refusal through."""

from __future__ import annotations

from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from console.access.masking import MaskedSerializer
from console.brokers import BrokerError
from console.refusals import Refusal


class ErrorSerializer(MaskedSerializer):
    detail = serializers.CharField(help_text="What was refused and why, for a person to read")


class BrokerErrorSerializer(ErrorSerializer):
    permanent = serializers.BooleanField(help_text="True when trying again cannot help")


def handle_exception(exc: Exception, context: dict) -> Response | None:
    """DRF's EXCEPTION_HANDLER: a refusal answers ``{"detail": why}`` with its status (400, 403,
    404 or 409); everything else as DRF answers it."""
    if isinstance(exc, Refusal):
        return Response({"detail": str(exc)}, status=exc.status)
    return exception_handler(exc, context)


def broker_failed(error: BrokerError) -> Response:
    """The broker did not answer as needed: a gateway error, with whether a retry can help."""
    return Response({"detail": error.message, "permanent": error.permanent}, status=status.HTTP_502_BAD_GATEWAY)
