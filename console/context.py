"""Who and where the current change comes from, for the audit (set by middleware or a job)."""

from __future__ import annotations

from contextvars import ContextVar

source_ip: ContextVar[str | None] = ContextVar("source_ip", default=None)
#: The way in, when it is not a person's page or a script's API call: ``mcp:<tool>`` for an
#: agent's call (console.agents.api), written into the audit row's details as ``via``.
via: ContextVar[str | None] = ContextVar("via", default=None)


class SourceIpMiddleware:
    """Remembers the client address of the current request for audit rows."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        token = source_ip.set(request.META.get("REMOTE_ADDR") or None)
        try:
            return self.get_response(request)
        finally:
            source_ip.reset(token)
