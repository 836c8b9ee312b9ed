"""The roles page (admins): every user with their role and limits, and a form to change a role.

Changes go through console.services.roles.do_grant_role, which audits them and keeps the user's
limits to brokers or places: those are set with ``manage.py grant_role`` and shown here, a
removed broker or place included (it still limits the user, to nothing there).
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from console.access.roles import ROLES, role_of
from console.access.scope import OutOfScope
from console.services.claims import sources_seen_by
from console.services.roles import do_grant_role, limits_seen_by


def role_list(request):
    users = list(get_user_model().objects.filter(is_active=True).select_related("external_identity")
                 .order_by("username"))
    limits = limits_seen_by(request.user)  # an admin with limits reads others' beyond them unnamed
    sources = sources_seen_by(request.user, users, limits)
    rows = [(user, role_of(user), limits.get(user.pk, []), sources.get(user.pk)) for user in users]
    return render(request, "web/roles.html", {"rows": rows, "roles": list(ROLES)})


@require_POST
def role_grant(request, user_id: int):
    """Make the posted role (or none) the user's one role."""
    user = get_object_or_404(get_user_model(), pk=user_id, is_active=True)
    role = request.POST.get("role", "")
    if role not in (*ROLES, ""):
        messages.error(request, f"There is no role {role!r}.")
    elif user.is_superuser:
        messages.error(request, f"{user.get_username()} is a superuser: an admin whatever the role says.")
    else:
        try:
            do_grant_role(user, role, actor=request.user, reason=request.POST.get("reason", "").strip())
        except OutOfScope as exc:  # an admin limited to some places, beyond them (audited)
            messages.error(request, str(exc))
        else:
            messages.success(request, f"{user.get_username()} is now {role or 'without a role'}.")
    return redirect("roles")
