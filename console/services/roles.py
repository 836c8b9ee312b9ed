"""Changing who may do what: a user's one role, and the brokers or places they are limited to.
Both are audited (``grant_role``, ``grant_scope``); the roles themselves are console.access.roles.

An admin limited to some brokers or places governs only within their limits. They may not lift
anyone's limits (their own included), nor limit anyone to a broker or place beyond their own,
nor change the role or limits of a user who may see beyond their own limits (an unlimited user,
or one limited elsewhere), except a user without a role, who sees nothing; and a user they give
a role must end up limited within their own limits. Each refusal is audited
(``grant_refused``, naming no place: read by those without limits) and answers 403
(console.access.scope.OutOfScope). Admins without limits, and commands, are not bound.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.models import User
from django.db import transaction

from console.access.actors import Actor
from console.access.roles import limits_of, role_of, set_role
from console.access.scope import OutOfScope, Scope, scope_of
from console.models import Broker, DeadPlace, RoleScope
from console.services import audit

#: Limits as given: (brokers, places); None when they are not being changed.
Limits = tuple[Iterable[Broker], Iterable[DeadPlace]]


def do_change_access(user: User, *, actor: Actor, role: str | None = None, brokers: Iterable[Broker] = (),
                     places: Iterable[DeadPlace] = (), clear_limits: bool = False, reason: str = "") -> None:
    """Change a user's role (unless ``role`` is None) and, when brokers, places or
    ``clear_limits`` are given, their limits: checked as a whole first, then made in one
    transaction (so nothing is half done when part of it is refused)."""
    brokers, places = list(brokers), list(places)
    limits = (brokers, places) if brokers or places else None
    guard_access(actor, user, role=role, limits=limits, clear=clear_limits)
    with transaction.atomic():
        if role is not None:
            _grant_role(user, role, actor=actor, reason=reason)
        if limits is not None or clear_limits:
            _set_limits(user, brokers=brokers, places=places, actor=actor, reason=reason)


def do_grant_role(user: User, role: str, *, actor: Actor, reason: str = "") -> None:
    """Make ``role`` the user's one role (the other role groups are taken away); audited.

    ``role`` "" takes every role away. Limits to brokers or places are kept as they are: a
    limited user given another role stays limited (:func:`do_set_limits` changes them).
    """
    guard_access(actor, user, role=role)
    _grant_role(user, role, actor=actor, reason=reason)


def do_set_limits(user: User, *, brokers: Iterable[Broker] = (), places: Iterable[DeadPlace] = (), actor: Actor,
                  reason: str = "") -> None:
    """Limit ``user`` to exactly these brokers and places; none of either lifts every limit,
    which only an explicit ``--clear-limits`` asks for. Audited (``grant_scope``) with what the
    limits were and are, removed brokers and places included."""
    brokers, places = list(brokers), list(places)
    guard_access(actor, user, limits=(brokers, places) if brokers or places else None,
                 clear=not brokers and not places)
    _set_limits(user, brokers=brokers, places=places, actor=actor, reason=reason)


def guard_access(actor: Actor, user: User, *, role: str | None = None, limits: Limits | None = None,
                 clear: bool = False) -> None:
    """Refuse (audited, then OutOfScope) a change of ``user``'s role or limits that would reach
    beyond the acting admin's own limits (see the module's docstring)."""
    why = access_refusal(actor, user, role=role, limits=limits, clear=clear)
    if not why:
        return
    with transaction.atomic():
        brokers, places = limits if limits is not None else ((), ())
        audit.record("grant_refused", actor=actor, target=user.get_username(), outcome="refused",
                     details={"why": why, "role": role, "clear_limits": clear,
                              "brokers": sorted(b.pk for b in brokers), "places": sorted(p.pk for p in places)})
    # Outside the transaction, so the audit row of the attempt stays.
    raise OutOfScope(why)


def access_refusal(actor: Actor, user: User, *, role: str | None = None, limits: Limits | None = None,
                   clear: bool = False) -> str:
    """Why ``actor`` may not make this change of ``user``'s access; "" when they may."""
    mine = scope_of(actor)
    if mine.unlimited:
        return ""
    if clear:
        return "you are limited yourself: only an admin without limits may lift limits"
    if limits is not None:
        brokers, places = limits
        if not _covers(mine, {broker.pk for broker in brokers}, {place.pk for place in places}):
            return "those limits reach beyond your own: you may limit people only to your own brokers and places"
    theirs = scope_of(user)
    if role_of(user) and not _covers(mine, theirs.brokers, theirs.places):
        return (f"{user.get_username()} may see beyond your limits: only an admin without limits may change "
                "their role or limits")
    if role and limits is None and not _covers(mine, theirs.brokers, theirs.places):
        return (f"{user.get_username()} is not limited within your limits: limit them to your places before "
                "giving them a role")
    return ""


#: What a limited reader reads for the limits of others that lie beyond their own.
BEYOND_YOUR_LIMITS = "places beyond your limits"


def limits_seen_by(reader: Actor) -> dict[int, list[str]]:
    """Each limited user's limits by user id, as ``reader`` may read them: a reader with limits
    reads the brokers and places within their own by name, and the rest as one
    :data:`BEYOND_YOUR_LIMITS` (no name, no count); a removed broker or place is named to
    readers without limits only."""
    mine = scope_of(reader)
    seen: dict[int, list[str]] = {}
    for row in RoleScope.objects.select_related("broker", "place").order_by("id"):
        labels = seen.setdefault(row.user_id, [])
        if mine.unlimited:
            within = True
        elif row.place is not None:
            within = mine.allows(row.place.broker_id, row.place_id)
        else:
            within = row.broker_id is not None and mine.allows(row.broker_id, None)
        if within:
            labels.append(row.label)
        elif BEYOND_YOUR_LIMITS not in labels:
            labels.append(BEYOND_YOUR_LIMITS)
    return seen


def _covers(mine: Scope, brokers: Iterable[int] | None, places: Iterable[int] | None) -> bool:
    """Whether ``mine`` allows every one of these brokers and places (None: unlimited, never
    covered by a limited scope). A place that no longer exists is covered: it allows nothing."""
    if mine.unlimited:
        return True
    if brokers is None or places is None:
        return False
    if any(not mine.allows(broker, None) for broker in brokers):
        return False
    found = dict(DeadPlace.objects.filter(pk__in=list(places)).values_list("pk", "broker_id"))
    return all(mine.allows(broker_id, pk) for pk, broker_id in found.items())


@transaction.atomic
def _grant_role(user: User, role: str, *, actor: Actor, reason: str = "") -> None:
    before = role_of(user)
    set_role(user, role)
    audit.record("grant_role", actor=actor, reason=reason, target=user.get_username(),
                 details={"before": before, "after": role})


@transaction.atomic
def _set_limits(user: User, *, brokers: Iterable[Broker] = (), places: Iterable[DeadPlace] = (), actor: Actor,
                reason: str = "") -> None:
    before = limits_of(user)
    RoleScope.objects.filter(user=user).delete()
    rows = [RoleScope.objects.create(user=user, broker=broker) for broker in brokers]
    rows += [RoleScope.objects.create(user=user, place=place) for place in places]
    user.__dict__.pop("_dlo_scope", None)  # console.access.scope caches the scope on the instance
    audit.record("grant_scope", actor=actor, reason=reason, target=user.get_username(),
                 details={"brokers": [row.label for row in rows if row.broker_id],
                          "places": [row.label for row in rows if row.place_id], "before": before})
