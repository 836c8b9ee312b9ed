"""The API's documentation page: Swagger UI at /api/docs/, from drf-spectacular-sidecar's
static files inside the console's page (templates/api/swagger_ui.html), under the console's
Content-Security-Policy whole: its initializer is a static file (static/js/api_docs.js), not
drf-spectacular's inline script.

No ReDoc: its bundle (2.5) writes its CSS into <style> elements whose nonce no page can set,
runs its search in a worker made from a blob, and loads its logo from its makers' CDN on every
page, so it cannot be shown within the policy nor offline.
"""

from __future__ import annotations

from drf_spectacular.views import SpectacularSwaggerView
from rest_framework.permissions import IsAuthenticated

from console.access.api import RolePermission

# drf-spectacular serves its schema and pages to anyone unless told otherwise.
SIGNED_IN = [IsAuthenticated, RolePermission]


class SwaggerView(SpectacularSwaggerView):
    template_name = "api/swagger_ui.html"
    permission_classes = SIGNED_IN
