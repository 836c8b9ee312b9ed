"""Changing the groups-claim mapping (console.access.claims): which role and limits a value of
the provider's groups claim gives. Each change is audited (``claim_mapping.set``,
``claim_mapping.delete``) and takes effect at each person's next sign-in (or next access token).

A mapping gives a role to everyone in a group, so an admin limited to some brokers or places
reads and changes only mappings limited within their own limits, and may not make one that is
unlimited or reaches beyond them; such a refusal is audited (``claim_mapping.refused``) and
answers 403. While the mapping comes from the environment (DLO_OIDC_ROLE_MAPPING), nothing here
changes it: 409.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction

from console.access.actors import Actor
from console.access.claims import from_file
from console.access.roles import ROLES, WITHHOLDABLE
from console.access.scope import OutOfScope, Scope, scope_of
from console.models import Broker, ClaimMapping, ClaimMappingLimit, DeadPlace
from console.refusals import Conflict, Refusal
from console.services import audit


class MappingRefused(Refusal):
    """The mapping as given cannot be (an empty group, an unknown role)."""


def visible_mappings(reader: Actor) -> list[ClaimMapping]:
    """The console's mappings ``reader`` may read: all without limits; with limits, those limited
    within theirs (one unlimited, or reaching elsewhere, would name groups and places beyond)."""
    rows = list(ClaimMapping.objects.prefetch_related("limits__broker", "limits__place").order_by("group"))
    mine = scope_of(reader)
    return [row for row in rows if mine.unlimited or _within(mine, list(row.limits.all()))]


def do_set_mapping(*, actor: Actor, group: str, role: str, brokers: Iterable[Broker] = (),
                   places: Iterable[DeadPlace] = (), withhold: Iterable[str] = (), note: str = "",
                   reason: str = "") -> ClaimMapping:
    """Make ``group`` give ``role``, limited to exactly these brokers and places (none: unlimited)
    and without the rights ``withhold`` names (console.access.roles.WITHHOLDABLE); the mapping of
    that group is made or replaced. Audited with what it gave before."""
    group, brokers, places = group.strip(), list(brokers), list(places)
    if not group or len(group) > 255:
        raise MappingRefused("a mapping needs the group's value (at most 255 characters)")
    if role not in ROLES:
        raise MappingRefused(f"no role {role!r}; roles: {', '.join(ROLES)}")
    withhold = sorted(set(withhold))
    if set(withhold) - set(WITHHOLDABLE):
        raise MappingRefused(f"only these rights can be withheld: {', '.join(WITHHOLDABLE)}")
    existing = ClaimMapping.objects.filter(group=group).prefetch_related("limits").first()
    _guard(actor, group, existing, brokers, places)
    with transaction.atomic():
        before = _described(existing)
        mapping = existing or ClaimMapping(group=group)
        mapping.role, mapping.note, mapping.withhold = role, note.strip()[:500], withhold
        mapping.save()
        mapping.limits.all().delete()
        for broker in brokers:
            ClaimMappingLimit.objects.create(mapping=mapping, broker=broker)
        for place in places:
            ClaimMappingLimit.objects.create(mapping=mapping, place=place)
        audit.record("claim_mapping.set", actor=actor, reason=reason, target=group,
                     details={"before": before, "after": _described(mapping)})
    return mapping


def do_delete_mapping(group: str, *, actor: Actor, reason: str = "") -> None:
    """Remove the mapping of ``group``: from their next sign-in on, it gives no one anything."""
    existing = ClaimMapping.objects.filter(group=group).prefetch_related("limits").first()
    if existing is None:
        raise Conflict(f"no mapping for the group {group!r}")
    _guard(actor, group, existing, None, None)
    with transaction.atomic():
        audit.record("claim_mapping.delete", actor=actor, reason=reason, target=group,
                     details={"before": _described(existing)})
        existing.delete()


def _guard(actor: Actor, group: str, existing: ClaimMapping | None, brokers: list[Broker] | None,
           places: list[DeadPlace] | None) -> None:
    if from_file():
        raise Conflict("the mapping comes from DLO_OIDC_ROLE_MAPPING: change it there")
    mine = scope_of(actor)
    if mine.unlimited:
        return
    why = ""
    if existing is not None and not _within(mine, list(existing.limits.all())):
        why = "that mapping reaches beyond your limits: only an admin without limits may change it"
    elif brokers is not None and places is not None:
        if not brokers and not places:
            why = "you are limited yourself: a mapping you make must be limited to your brokers or places"
        elif not all(mine.allows(b.pk, None) for b in brokers) or not all(mine.allows(p.broker_id, p.pk)
                                                                           for p in places):
            why = "those limits reach beyond your own: map groups only to your own brokers and places"
    if not why:
        return
    with transaction.atomic():
        audit.record("claim_mapping.refused", actor=actor, target=group, outcome="refused", details={"why": why})
    raise OutOfScope(why)  # outside the transaction: the audit row of the attempt stays


def _within(mine: Scope, limits: list[ClaimMappingLimit]) -> bool:
    """Whether a limited reader's scope covers every limit (and there is at least one)."""
    if not limits:
        return False
    return all(limit.broker_id is None and limit.place_id is None  # removed: allows nothing
               or (limit.place_id is not None and limit.place is not None
                   and mine.allows(limit.place.broker_id, limit.place_id))
               or (limit.place_id is None and mine.allows(limit.broker_id, None))
               for limit in limits)


def _described(mapping: ClaimMapping | None) -> dict[str, object] | None:
    if mapping is None or mapping.pk is None:
        return None
    return {"role": mapping.role, "limits": [limit.label for limit in mapping.limits.all().order_by("id")],
            "withhold": list(mapping.withhold)}
