"""The Content Security Policy header (Django 5.2 has none of its own).

The policy (settings.DLO_CONTENT_SECURITY_POLICY) allows no inline script and no inline
style: pages load their JavaScript and CSS from /static/, and htmx is told not to inject its
indicator styles (templates/base.html). Django's SecurityMiddleware sends the other headers
(HSTS, nosniff, Referrer-Policy) and XFrameOptionsMiddleware sends X-Frame-Options.
"""

from __future__ import annotations

from django.conf import settings


def policy_text(policy: dict[str, str]) -> str:
    """``{"script-src": "'self'"}`` -> ``"script-src 'self'"``, directives joined by "; "."""
    return "; ".join(f"{directive} {sources}".strip() for directive, sources in policy.items())


class ContentSecurityPolicyMiddleware:
    """Adds Content-Security-Policy to every response that does not set its own."""

    def __init__(self, get_response):
        self.get_response = get_response
        self.header = policy_text(settings.DLO_CONTENT_SECURITY_POLICY)

    def __call__(self, request):
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", self.header)
        return response
