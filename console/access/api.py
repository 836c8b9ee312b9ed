"""Apply the URL policy to the REST API: 401/403 as JSON, like every DRF refusal."""

from __future__ import annotations

from rest_framework.exceptions import NotFound
from rest_framework.permissions import BasePermission

from console.access import policy
from console.access.roles import has
from console.access.scope import allows_url


class RolePermission(BasePermission):
    """The permission the policy table names for the route and method; objects named in the
    URL must be in the user's scope (else 404, as if they did not exist)."""

    message = "Your role does not allow this."

    def has_permission(self, request, view) -> bool:
        match = request.resolver_match
        try:
            needed = policy.required(match.url_name if match else None, request.method, request.data)
        except policy.Unclassified:
            return False
        if needed == [policy.PUBLIC]:
            return True
        if not (request.user and request.user.is_authenticated):
            return False
        if not all(has(request.user, codename) for codename in needed if codename != policy.SIGNED_IN):
            return False
        if not allows_url(request.user, view.kwargs):
            raise NotFound()
        return True
