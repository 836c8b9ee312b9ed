"""``/healthz``: whether this console process answers and reaches its database, for a load
balancer or an orchestrator's liveness probe; and the identity provider's state as last seen
(console.security.provider), which never fails the probe: the console serves its password and
token users, and the provider's keys already known, while the provider is away."""

from __future__ import annotations

from django.db import DatabaseError, connection
from django.http import JsonResponse
from django.views.decorators.http import require_GET

from console.security import provider
from console.security.signin import provider_enabled


@require_GET
def healthz(request):
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        database = "up"
    except DatabaseError:
        database = "down"
    answer = {"status": "ok" if database == "up" else "failing", "database": database}
    if provider_enabled():
        answer["identity_provider"] = provider.health()
    return JsonResponse(answer, status=200 if database == "up" else 503)
