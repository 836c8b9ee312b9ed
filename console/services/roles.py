"""Changing who may do what: a user's one role, and the brokers or places they are limited to.
Both are audited (``grant_role``, ``grant_scope``); the roles themselves are console.access.roles."""

from __future__ import annotations

from django.db import transaction

from console.access.roles import limits_of, role_of, set_role
from console.models import RoleScope
from console.services import audit


@transaction.atomic
def do_grant_role(user, role: str, *, actor, reason: str = "") -> None:
    """Make ``role`` the user's one role (the other role groups are taken away); audited.

    ``role`` "" takes every role away. Limits to brokers or places are kept as they are: a
    limited user given another role stays limited (:func:`do_set_limits` changes them).
    """
    before = role_of(user)
    set_role(user, role)
    audit.record("grant_role", actor=actor, reason=reason, target=user.get_username(),
                 details={"before": before, "after": role})


@transaction.atomic
def do_set_limits(user, *, brokers=(), places=(), actor, reason: str = "") -> None:
    """Limit ``user`` to exactly these brokers and places; none of either lifts every limit,
    which only an explicit ``--clear-limits`` asks for. Audited (``grant_scope``) with what the
    limits were and are, removed brokers and places included."""
    before = limits_of(user)
    RoleScope.objects.filter(user=user).delete()
    rows = [RoleScope.objects.create(user=user, broker=broker) for broker in brokers]
    rows += [RoleScope.objects.create(user=user, place=place) for place in places]
    user.__dict__.pop("_dlo_scope", None)  # console.access.scope caches the scope on the instance
    audit.record("grant_scope", actor=actor, reason=reason, target=user.get_username(),
                 details={"brokers": [row.label for row in rows if row.broker_id],
                          "places": [row.label for row in rows if row.place_id], "before": before})
