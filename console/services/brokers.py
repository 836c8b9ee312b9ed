"""Adding brokers, checking them and discovering their dead places."""

from __future__ import annotations

from urllib.parse import unquote, urlsplit, urlunsplit

from django.db import transaction
from django.utils import timezone

from console.brokers import BrokerError, PlaceInfo
from console.brokers.registry import KINDS
from console.models import Broker, DeadPlace
from console.services import audit
from console.services.audit import Actor


class BrokerSetupError(ValueError):
    """A broker definition the console refuses."""


def split_credentials(url: str) -> tuple[str, str, str]:
    """``amqp://user:pw@host/vh`` -> (``amqp://host/vh``, user, pw): secrets are kept apart."""
    parts = urlsplit(url)
    if not parts.scheme or not parts.hostname:
        raise BrokerSetupError(f"{url!r} is not a URL with a scheme and a host")
    netloc = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    if parts.port:
        netloc += f":{parts.port}"
    clean = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return clean, unquote(parts.username or ""), unquote(parts.password or "")


@transaction.atomic
def do_add_broker(
    *, actor: Actor, name: str, kind: str, url: str, management_url: str = "",
    username: str = "", password: str = "", options: dict | None = None,
) -> Broker:
    if kind not in KINDS:
        raise BrokerSetupError(f"unknown kind {kind!r}; known: {', '.join(sorted(KINDS))}")
    if Broker.objects.filter(name=name).exists():
        raise BrokerSetupError(f"a broker named {name!r} exists already")
    clean_url, url_user, url_password = split_credentials(url)
    management_clean, mgmt_user, mgmt_password = (
        split_credentials(management_url) if management_url else ("", "", "")
    )
    broker = Broker(
        name=name, kind=kind, url=clean_url, management_url=management_clean,
        username=username or url_user or mgmt_user, options=options or {},
    )
    broker.password = password or url_password or mgmt_password
    broker.full_clean()
    broker.save()
    audit.record("broker.add", actor=actor, broker=broker,
                 details={"kind": kind, "url": clean_url, "management_url": management_clean,
                          "username": broker.username})
    return broker


def check_broker(broker: Broker) -> dict:
    """Connect to the broker and record whether it answered (health, not a change: no audit)."""
    try:
        with broker.adapter() as adapter:
            facts = adapter.check()
    except BrokerError as exc:
        Broker.objects.filter(pk=broker.pk).update(
            reachable=False, last_error=exc.message, last_checked_at=timezone.now()
        )
        raise
    Broker.objects.filter(pk=broker.pk).update(
        reachable=True, version=str(facts.get("version", ""))[:100], last_error="",
        last_checked_at=timezone.now(),
    )
    return facts


def do_discover(broker: Broker, *, actor: Actor) -> list[DeadPlace]:
    """Ask the broker for its dead places; add new ones, refresh known ones, flag vanished ones."""
    try:
        with broker.adapter() as adapter:
            found = adapter.discover()
    except BrokerError as exc:
        Broker.objects.filter(pk=broker.pk).update(
            reachable=False, last_error=exc.message, last_checked_at=timezone.now()
        )
        raise
    return _apply_discovery(broker, found, actor=actor)


@transaction.atomic
def _apply_discovery(broker: Broker, found: list[PlaceInfo], *, actor: Actor) -> list[DeadPlace]:
    now = timezone.now()
    known = {(p.scope, p.name): p for p in DeadPlace.objects.select_for_update().filter(broker=broker)}
    added, places = [], []
    for info in found:
        place = known.pop((info.scope, info.name), None)
        if place is None:
            # A place found by discovery is not a manual one (the model's default).
            place = DeadPlace(broker=broker, name=info.name, scope=info.scope, discovered_by=info.discovered_by)
            added.append(info.name)
        place.kind = info.kind
        if place.discovered_by != "manual":
            place.discovered_by = info.discovered_by
        place.origins = info.origins
        place.details = info.details
        place.depth = info.depth
        place.oldest_at = info.oldest_at
        place.consumers = info.consumers
        place.last_seen_at = now
        place.gone = False
        place.save()
        places.append(place)
    vanished = [p for p in known.values() if p.discovered_by != "manual" and not p.gone]
    for place in vanished:
        place.gone = True
        place.save(update_fields=["gone"])
    Broker.objects.filter(pk=broker.pk).update(
        reachable=True, last_error="", last_discovery_at=now, last_checked_at=now
    )
    audit.record("broker.discover", actor=actor, broker=broker, count=len(places),
                 details={"added": added, "gone": [p.name for p in vanished]})
    return places
