"""Roles and scopes from the identity provider's groups claim: which groups a token names, and
what role and limits the mapping gives them. Reads only; console.services.claims applies the
decision to the user (at every sign-in, and for every access token) and audits it.

The mapping's rules:

1. The mapping is the console's (ClaimMapping rows, set on the mapping page or through
   ``/api/claim-mappings/``), or, when DLO_OIDC_ROLE_MAPPING (or ``_FILE``) is set, that JSON
   alone; the console's page then shows it and changes nothing.
2. A group matches a mapping when the claim's value equals the mapping's group exactly (case
   and all: providers treat them as identifiers).
3. The role is the strongest one that a matching mapping gives (admin > operator > viewer);
   no matching mapping, no role.
4. The limits are those of the mappings that give that role: none if one of them has none
   (unlimited), else all of theirs together. A weaker mapping's limits are not added, since
   they would widen the stronger role to places it was not given for.
5. A limit naming a broker or place that is no more (or a file naming one that does not exist)
   stays, allowing nothing there: limits fail closed, as RoleScope rows do.
6. A mapping may withhold rights of its role (``withhold``: ``export_letters``, the right to
   export letters). A right is withheld when every mapping that gives the role withholds it
   (one that does not gives it, as one without limits gives every place).

The file's form::

    [{"group": "dlo-admins", "role": "admin"},
     {"group": "orders-team", "role": "operator", "brokers": ["rabbit-prod"],
      "places": [{"broker": "rabbit-prod", "name": "orders.dlq", "scope": "/"}]},
     {"group": "contractors", "role": "operator", "withhold": ["export_letters"]}]
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from console.access.roles import ADMIN, OPERATOR, ROLES, VIEWER, WITHHOLDABLE
from console.env import ConfigError

#: Strongest first.
_STRENGTH = (ADMIN, OPERATOR, VIEWER)


@dataclass(frozen=True)
class Limit:
    """One broker or place a role is limited to; both ids None: one that is no more (allows nothing)."""

    broker_id: int | None
    place_id: int | None
    named: str


@dataclass(frozen=True)
class MappingRule:
    """One mapping, from the console's table or from the file."""

    group: str
    role: str
    limits: tuple[Limit, ...]
    source: str  # "console #3" or "file"
    withhold: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.source} ({self.group})"


@dataclass(frozen=True)
class Decision:
    """What the mapping gives a set of groups."""

    role: str
    limits: tuple[Limit, ...]
    groups: tuple[str, ...]  # the claim values that decided the role
    mappings: tuple[str, ...]
    withheld: tuple[str, ...] = ()


def groups_in(claims: Mapping[str, Any], claim: str | None = None) -> list[str]:
    """The values of the groups claim (a name or a dotted path); a single string counts as one
    group, anything that is not a string is ignored. Missing: no groups."""
    value: Any = claims
    for part in (claim or settings.DLO_OIDC_GROUPS_CLAIM).split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return []
    return sorted({item for item in value if isinstance(item, str) and item})


def from_file() -> bool:
    """Whether the mapping comes from the environment (and the console's page only shows it)."""
    return bool(settings.DLO_OIDC_ROLE_MAPPING.strip())


def mapping_rules() -> list[MappingRule]:
    """Every mapping in force: the environment's, or else the console's table."""
    if from_file():
        return _file_rules(settings.DLO_OIDC_ROLE_MAPPING)
    from console.models import ClaimMapping

    return [MappingRule(group=row.group, role=row.role, source=f"console #{row.pk}", withhold=tuple(row.withhold),
                        limits=tuple(Limit(limit.broker_id, limit.place_id, limit.named)
                                     for limit in row.limits.all().order_by("id")))
            for row in ClaimMapping.objects.prefetch_related("limits").order_by("group")]


def decide(groups: Iterable[str], rules: list[MappingRule] | None = None) -> Decision:
    """The role and limits the mapping gives someone in ``groups`` (the module's rules 2-4)."""
    held = set(groups)
    matching = [rule for rule in (mapping_rules() if rules is None else rules) if rule.group in held]
    role = next((role for role in _STRENGTH if any(rule.role == role for rule in matching)), "")
    deciding = [rule for rule in matching if rule.role == role]
    if not deciding or any(not rule.limits for rule in deciding):
        limits: tuple[Limit, ...] = ()
    else:
        limits = tuple(dict.fromkeys(limit for rule in deciding for limit in rule.limits))
    withheld = tuple(sorted(set.intersection(*(set(rule.withhold) for rule in deciding)))) if deciding else ()
    return Decision(role=role, limits=limits, groups=tuple(sorted({rule.group for rule in deciding})),
                    mappings=tuple(rule.label for rule in deciding), withheld=withheld)


def check_mapping(text: str) -> None:
    """ConfigError, naming DLO_OIDC_ROLE_MAPPING and the mapping, for a file that is not a
    mapping; nothing is looked up (a system check runs it at start: console.security.checks)."""
    _parsed(text)


def _file_rules(text: str) -> list[MappingRule]:
    """The environment's mapping, parsed, its names resolved each time (a broker or place added
    later counts from the next sign-in on; one that does not exist allows nothing)."""
    return [MappingRule(group=group, role=role, source="file", limits=_file_limits(brokers, places),
                        withhold=withhold) for group, role, brokers, places, withhold in _parsed(text)]


def _parsed(text: str) -> list[tuple[str, str, list[str], list[dict[str, str]], tuple[str, ...]]]:
    """Each mapping's group, role, broker names, places and withheld rights, checked."""
    try:
        given = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"DLO_OIDC_ROLE_MAPPING is not JSON: {exc}") from exc
    if not isinstance(given, list):
        raise ConfigError("DLO_OIDC_ROLE_MAPPING: a list of mappings, each {\"group\": ..., \"role\": ...}")
    parsed, seen = [], set()
    for number, item in enumerate(given, 1):
        where = f"DLO_OIDC_ROLE_MAPPING, mapping {number}"
        if not isinstance(item, dict) or set(item) - {"group", "role", "brokers", "places", "withhold", "note"}:
            raise ConfigError(f"{where}: keys are group, role, brokers, places, withhold and note")
        group, role = item.get("group"), item.get("role")
        if not isinstance(group, str) or not group or group in seen:
            raise ConfigError(f"{where}: group must be a text, once in the file")
        if role not in ROLES:
            raise ConfigError(f"{where}: role must be one of {', '.join(ROLES)}")
        brokers, places = item.get("brokers", []), item.get("places", [])
        if not isinstance(brokers, list) or not all(isinstance(name, str) for name in brokers):
            raise ConfigError(f"{where}: brokers is a list of broker names")
        if not isinstance(places, list) or not all(isinstance(p, dict) and isinstance(p.get("broker"), str)
                                                   and isinstance(p.get("name"), str) for p in places):
            raise ConfigError(f"{where}: places is a list of {{\"broker\": ..., \"name\": ..., \"scope\": ...}}")
        withhold = item.get("withhold", [])
        if not isinstance(withhold, list) or not all(right in WITHHOLDABLE for right in withhold):
            raise ConfigError(f"{where}: withhold is a list of rights, of {', '.join(WITHHOLDABLE)}")
        seen.add(group)
        parsed.append((group, str(role), brokers, places, tuple(sorted(set(withhold)))))
    return parsed


def _file_limits(brokers: list[str], places: list[dict[str, str]]) -> tuple[Limit, ...]:
    from console.models import Broker, DeadPlace

    limits = []
    for name in brokers:
        broker_id = Broker.objects.filter(name=name).values_list("pk", flat=True).first()
        limits.append(Limit(broker_id, None, name))
    for place in places:
        scope = place.get("scope") or ""
        place_id = DeadPlace.objects.filter(broker__name=place["broker"], name=place["name"],
                                            scope=scope).values_list("pk", flat=True).first()
        limits.append(Limit(None, place_id, f"{place['broker']}:{scope + '/' if scope else ''}{place['name']}"))
    return tuple(limits)
