"""The few error answers the API gives besides DRF's own, and their schema."""

from __future__ import annotations

from rest_framework import serializers, status
from rest_framework.response import Response

from console.brokers import BrokerError


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="What was refused and why, for a person to read")


class BrokerErrorSerializer(ErrorSerializer):
    permanent = serializers.BooleanField(help_text="True when trying again cannot help")


def refused(error: Exception, code: int = status.HTTP_400_BAD_REQUEST) -> Response:
    """A request the services refused (JobError, SelectionError, BrokerSetupError)."""
    return Response({"detail": str(error)}, status=code)


def broker_failed(error: BrokerError) -> Response:
    """The broker did not answer as needed: a gateway error, with whether a retry can help."""
    return Response({"detail": error.message, "permanent": error.permanent}, status=status.HTTP_502_BAD_GATEWAY)
