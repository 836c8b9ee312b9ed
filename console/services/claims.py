"""Applying the groups-claim mapping (console.access.claims) to the person or script a provider
vouches for: at every OpenID Connect sign-in and for every access token the API accepts.

The identity is the provider's ``(issuer, sub)`` (console.models.ExternalIdentity), never a
name or an e-mail address, so an account made here is never taken over by a namesake. A subject
in no mapped group gets no account; one who had an account loses its role and limits. Changes
are written, and audited (``access.from_claims``, with the groups and mappings that decided),
only when the role, the limits or what decided them differ, so a token checked on every request
costs a few reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from console.access.actors import Actor
from console.access.claims import Decision, decide, groups_in
from console.access.roles import limits_of, role_of, set_role, set_withheld, withheld_from
from console.access.scope import scope_of
from console.models import ExternalIdentity, RoleScope
from console.refusals import Forbidden
from console.services import audit
from console.services.roles import BEYOND_YOUR_LIMITS


class ClaimsRefused(Forbidden):
    """The claims name no subject, or the account they name has been deactivated here."""


@dataclass(frozen=True)
class ClaimedAccess:
    """What a provider's claims gave: the user (None when nothing was made: no mapped group, no
    account yet), their role ("" for none) and limits ([] is unlimited when there is a role),
    the groups and mappings that decided, and whether this call changed anything."""

    user: User | None
    role: str
    limits: list[str]
    groups: list[str]
    mappings: list[str]
    changed: bool


def provider_actor(issuer: str) -> str:
    """Who changes a role from claims, in the audit: the provider, not the person."""
    return f"provider {issuer}"


def access_from_claims(claims: Mapping[str, Any], *, issuer: str, via: str) -> ClaimedAccess:
    """Find (or make) the user of ``(issuer, claims["sub"])`` and give them exactly the role and
    limits the mapping gives their groups. ``claims`` must already be validated (signature,
    issuer, audience, times). ``via``: "sign-in" or "token", for the audit."""
    subject = claims.get("sub")
    if not isinstance(subject, str) or not subject:
        raise ClaimsRefused("the provider's token names no subject (sub)")
    decision = decide(groups_in(claims))
    with transaction.atomic():
        identity = (ExternalIdentity.objects.select_for_update().select_related("user")
                    .filter(issuer=issuer, subject=subject).first())
        if identity is None:
            if not decision.role:
                return ClaimedAccess(None, "", [], [], [], changed=False)
            identity = ExternalIdentity.objects.create(user=_new_user(claims, subject), issuer=issuer,
                                                       subject=subject)
        user = identity.user
        if not user.is_active:
            raise ClaimsRefused(f"{user.get_username()} has been deactivated in the console")
        changed = _apply(user, identity, decision, issuer=issuer, subject=subject, via=via)
    return ClaimedAccess(user, decision.role, limits_of(user) if decision.role else [], list(decision.groups),
                         list(decision.mappings), changed)


def _apply(user: User, identity: ExternalIdentity, decision: Decision, *, issuer: str, subject: str,
           via: str) -> bool:
    """Make the user's role and limits the decision's; audit and return True if anything changed."""
    rows = [(row.broker_id, row.place_id, row.named if not (row.broker_id or row.place_id) else "")
            for row in RoleScope.objects.filter(user=user).order_by("id")]
    wanted = [(limit.broker_id, limit.place_id, limit.named if not (limit.broker_id or limit.place_id) else "")
              for limit in decision.limits] if decision.role else []
    before_role = role_of(user)
    withheld = list(decision.withheld) if decision.role else []
    before_withheld = withheld_from(user)
    same = (before_role == decision.role and sorted(rows, key=str) == sorted(wanted, key=str)
            and before_withheld == withheld
            and identity.role == decision.role and identity.groups == list(decision.groups)
            and identity.mappings == list(decision.mappings))
    if same:
        return False
    before_limits = limits_of(user)
    set_role(user, decision.role)
    set_withheld(user, withheld)
    RoleScope.objects.filter(user=user).delete()
    RoleScope.objects.bulk_create(RoleScope(user=user, broker_id=broker_id, place_id=place_id, named=limit.named)
                                  for (broker_id, place_id, _), limit in zip(wanted, decision.limits, strict=False))
    user.__dict__.pop("_dlo_scope", None)  # console.access.scope caches the scope on the instance
    identity.role, identity.groups, identity.mappings = decision.role, list(decision.groups), list(decision.mappings)
    identity.via, identity.applied_at = via, timezone.now()
    identity.save()
    audit.record("access.from_claims", actor=provider_actor(issuer), target=user.get_username(),
                 outcome=decision.role or "no role",
                 details={"provider": issuer, "subject": subject, "via": via, "groups": list(decision.groups),
                          "mappings": list(decision.mappings),
                          "before": {"role": before_role, "limits": before_limits, "withheld": before_withheld},
                          "after": {"role": decision.role, "limits": limits_of(user), "withheld": withheld}})
    return True


def _new_user(claims: Mapping[str, Any], subject: str) -> User:
    """A user named by the username claim (else, for a script's token, its client id; else the
    subject), made unique; no usable password: they sign in through the provider only."""
    wanted = next((value for key in (settings.DLO_OIDC_USERNAME_CLAIM, "client_id")
                   if isinstance(value := claims.get(key), str) and value.strip()), subject)
    base = wanted.strip()[:140]
    users = get_user_model().objects
    name, number = base, 1
    while users.filter(username__iexact=name).exists():
        number += 1
        name = f"{base}-{number}"
    user = users.create_user(name)
    user.set_unusable_password()
    user.save(update_fields=["password"])
    return user


def source_of(identity: ExternalIdentity) -> str:
    """Where a person's role and limits came from, as people read it."""
    if not identity.applied_at:
        return f"provider {identity.issuer}"
    groups = ", ".join(identity.groups) or "none mapped"
    mappings = ", ".join(identity.mappings) or "none"
    return (f"provider {identity.issuer} ({identity.via} {identity.applied_at:%Y-%m-%d %H:%M} UTC): "
            f"groups {groups}; mappings {mappings}")


def sources_seen_by(reader: Actor, users: Iterable[User], limits: dict[int, list[str]]) -> dict[int, str]:
    """Where each user's role came from, by user id, for those who came through the provider. A
    reader with limits reads the groups and mappings only of people limited within their own
    limits (``limits``: as console.services.roles.limits_seen_by gave them to this reader): a
    group's name may tell of places beyond."""
    unlimited = scope_of(reader).unlimited
    seen = {}
    for user in users:
        identity = getattr(user, "external_identity", None)  # None: no such row
        if identity is None:
            continue
        theirs = limits.get(user.pk, [])
        if unlimited or (theirs and BEYOND_YOUR_LIMITS not in theirs):
            seen[user.pk] = source_of(identity)
        else:
            seen[user.pk] = "the identity provider"
    return seen
