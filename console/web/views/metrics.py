"""``/metrics``: the console's metrics for Prometheus (console.services.metrics), behind the
bearer token in DLO_METRICS_TOKEN; without one set, there is no /metrics (404)."""

from __future__ import annotations

import hmac

from django.conf import settings
from django.http import Http404, HttpResponse
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from console.services.metrics import ConsoleCollector


@require_GET
def metrics(request):
    token = settings.DLO_METRICS_TOKEN
    if not token:
        raise Http404("metrics are off: set DLO_METRICS_TOKEN")
    given = request.headers.get("Authorization", "")
    if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
        response = HttpResponse("a bearer token is needed\n", status=401, content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    registry = CollectorRegistry(auto_describe=False)
    registry.register(ConsoleCollector())
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)
