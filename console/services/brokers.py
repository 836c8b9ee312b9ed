"""Adding brokers, checking them and discovering their dead places."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from console.access import logsafe
from console.access.actors import Actor
from console.brokers import Adapter, BrokerConfig, BrokerError, PlaceInfo, Received
from console.brokers.registry import KINDS, adapter_class, get_adapter
from console.models import Broker, DeadPlace
from console.refusals import Refusal
from console.services import audit


class BrokerSetupError(Refusal):
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
    username: str = "", password: str = "", options: dict[str, Any] | None = None,
) -> Broker:
    """Add a broker definition (audited). Credentials pasted into a URL are moved into the
    encrypted password; the URL is stored without them."""
    if Broker.objects.filter(name=name).exists():
        raise BrokerSetupError(f"a broker named {name!r} exists already")
    config = unsaved_config(kind=kind, url=url, management_url=management_url, username=username,
                            password=password, options=options)
    broker = Broker(name=name, kind=kind, url=config.url, management_url=config.management_url,
                    username=config.username, options=config.options)
    broker.password = config.password
    broker.full_clean()
    broker.save()
    audit.record("broker.add", actor=actor, broker=broker,
                 details={"kind": kind, "url": broker.url, "management_url": broker.management_url,
                          "username": broker.username})
    return broker


def unsaved_config(
    *, kind: str, url: str, management_url: str = "", username: str = "", password: str = "",
    options: dict[str, Any] | None = None,
) -> BrokerConfig:
    """The BrokerConfig a definition would get once saved, credentials in URLs taken out
    the way ``do_add_broker`` takes them out."""
    if kind not in KINDS:
        raise BrokerSetupError(f"unknown kind {kind!r}; known: {', '.join(sorted(KINDS))}")
    clean_url, url_user, url_password = split_credentials(url)
    management_clean, mgmt_user, mgmt_password = (
        split_credentials(management_url) if management_url else ("", "", "")
    )
    return BrokerConfig(
        kind=kind, url=clean_url, management_url=management_clean,
        username=username or url_user or mgmt_user,
        password=password or url_password or mgmt_password, options=dict(options or {}),
    )


class PasswordNeeded(BrokerSetupError):
    """A saved broker's password was asked to go somewhere the broker does not live."""


def stored_password_for(broker: Broker, url: str, management_url: str) -> str:
    """The saved broker's password, for clean URLs that still reach the broker where it was
    saved (no management URL at all is fine too). A changed URL or management URL gets no
    stored secret: whoever can edit the form must not be able to send it to a server of their
    choosing, for a test or by saving. Raises PasswordNeeded: type it again instead."""
    moved = url != broker.url or (management_url and management_url != broker.management_url)
    if broker.password and moved:
        raise PasswordNeeded("the URL or the management URL is not the saved one: type the password "
                             "again to use it there (the stored one goes only where it was saved)")
    stored: str = broker.password
    return stored


def test_connection(
    *, actor: Actor, kind: str, url: str, management_url: str = "", username: str = "", password: str = "",
    options: dict[str, Any] | None = None, broker: Broker | None = None,
) -> dict[str, Any]:
    """Connect with a definition and return what the broker says about itself
    (``{"version": ...}``). With a saved ``broker``, an empty password means its stored one,
    but only where it was saved (``stored_password_for``). Changes nothing, but is audited
    (who, which broker or "unsaved", the outcome; never a password), since it sends secrets.

    Raises BrokerError (the adapter's own, which never carries the password) or
    BrokerSetupError for a definition that is not even a URL, or that needs the password typed."""
    config = None
    try:
        config = unsaved_config(kind=kind, url=url, management_url=management_url, username=username,
                                password=password, options=options)
        if broker is not None and not config.password:
            config = replace(config, password=stored_password_for(broker, config.url, config.management_url))
        logsafe.remember(config.password)  # a password only typed into a form is masked in logs too
        with get_adapter(config) as adapter:
            facts = adapter.check()
    except (BrokerError, BrokerSetupError) as exc:
        _audit_test(actor, broker, config, "refused" if isinstance(exc, BrokerSetupError) else "failed",
                    getattr(exc, "message", str(exc)))
        raise
    _audit_test(actor, broker, config, "connected", "")
    return facts


@transaction.atomic
def _audit_test(actor: Actor, broker: Broker | None, config: BrokerConfig | None, outcome: str, error: str) -> None:
    """One audit row per connection test, whatever came of it: a test sends credentials out."""
    details = {"broker": broker.name if broker is not None else "unsaved", "error": error}
    if config is not None:
        details.update(kind=config.kind, url=config.url, management_url=config.management_url,
                       username=config.username)
    audit.record("broker.test", actor=actor, broker=broker, outcome=outcome, details=details)


# pytest would collect a module-level function named test_*; this one is a service.
test_connection.__test__ = False  # type: ignore[attr-defined]


@transaction.atomic
def do_update_broker(
    broker: Broker, *, actor: Actor, url: str | None = None, management_url: str | None = None,
    username: str | None = None, password: str = "", options: dict[str, Any] | None = None,
) -> Broker:
    """Change how the console reaches a broker. ``None`` (or, for the password, empty) keeps a
    value as it is. The audit row names what changed, never a secret's value."""
    broker = Broker.objects.select_for_update().get(pk=broker.pk)
    changes: dict[str, dict[str, Any]] = {}

    def change(field: str, value: Any) -> None:
        if value is not None and value != getattr(broker, field):
            changes[field] = {"from": getattr(broker, field), "to": value}
            setattr(broker, field, value)

    url_password = mgmt_password = ""
    if url is not None:
        url, url_user, url_password = split_credentials(url)
        username = username or url_user or username
    if management_url:
        management_url, mgmt_user, mgmt_password = split_credentials(management_url)
        username = username or mgmt_user or username
    secret = password or url_password or mgmt_password
    if not secret:  # refuses before anything changes
        stored_password_for(broker, broker.url if url is None else url,
                            broker.management_url if management_url is None else management_url)
    change("url", url)
    change("management_url", management_url)
    change("username", username)
    change("options", options)
    if secret and secret != broker.password:
        broker.password = secret
        changes["password"] = {"changed": True}
    if not changes:
        return broker
    broker.full_clean()
    # A new way in invalidates what the old one found out.
    broker.reachable, broker.version, broker.last_error = None, "", ""
    broker.save()
    audit.record("broker.update", actor=actor, broker=broker, details={"changed": changes})
    return broker


@contextmanager
def asked(broker: Broker) -> Iterator[Adapter]:
    """The broker's adapter, connected; when the broker does not answer (BrokerError), it is
    marked unreachable, saying why and since when, and the error goes on to the caller."""
    try:
        with broker.adapter() as adapter:
            yield adapter
    except BrokerError as exc:
        mark_unreachable(broker, exc.message)
        raise


def check_broker(broker: Broker) -> dict[str, Any]:
    """Connect to the broker and record whether it answered (health, not a change: no audit)."""
    with asked(broker) as adapter:
        facts = adapter.check()
    Broker.objects.filter(pk=broker.pk).update(
        reachable=True, version=str(facts.get("version", ""))[:100], last_error="",
        last_checked_at=timezone.now(), unreachable_since=None,
    )
    return facts


def mark_unreachable(broker: Broker, message: str) -> None:
    """The broker did not answer: say why, and since when (kept from its first failure on)."""
    now = timezone.now()
    Broker.objects.filter(pk=broker.pk).update(reachable=False, last_error=message, last_checked_at=now,
                                               unreachable_since=Coalesce(F("unreachable_since"), Value(now)))


def do_discover(broker: Broker, *, actor: Actor, scheduled: bool = False) -> list[DeadPlace]:
    """Ask the broker for its dead places; add new ones, refresh known ones, flag vanished ones
    (``gone``: a place is never deleted with its letters). Each place that appears or goes is
    an audit event of its own (``place.appeared``, ``place.gone``). A person's discovery is
    always audited (``broker.discover``); a ``scheduled`` one (console.jobs.automation.periodic) only
    when it found a change, so the audit does not fill with rounds that changed nothing."""
    with asked(broker) as adapter:
        found = adapter.discover()
    return _apply_discovery(broker, found, actor=actor, scheduled=scheduled)


@transaction.atomic
def _apply_discovery(broker: Broker, found: list[PlaceInfo], *, actor: Actor, scheduled: bool) -> list[DeadPlace]:
    """A new place is kept in custody when its broker's ``keep_new_places`` says so (the audit
    row of its appearance says which); one that comes back keeps its own setting."""
    now = timezone.now()
    known = {(p.scope, p.name): p for p in DeadPlace.objects.select_for_update().filter(broker=broker)}
    added, places = [], []
    for info in found:
        place = known.pop((info.scope, info.name), None)
        if place is None:
            # A place found by discovery is not a manual one (the model's default).
            place = DeadPlace(broker=broker, name=info.name, scope=info.scope, discovered_by=info.discovered_by,
                              keep_in_custody=broker.keep_new_places)
            added.append(place)
        elif place.gone:
            added.append(place)  # it had vanished and is back
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
    vanished = [p for p in known.values() if p.discovered_by not in ("manual", DeadPlace.IMPORTED) and not p.gone]
    for place in vanished:
        place.gone = True
        place.save(update_fields=["gone"])
    Broker.objects.filter(pk=broker.pk).update(
        reachable=True, last_error="", last_discovery_at=now, last_checked_at=now, unreachable_since=None
    )
    for place in added:
        audit.record("place.appeared", actor=actor, place=place,
                     details={"discovered_by": place.discovered_by, "keep_in_custody": place.keep_in_custody})
    for place in vanished:
        audit.record("place.gone", actor=actor, place=place)
    if added or vanished or not scheduled:
        audit.record("broker.discover", actor=actor, broker=broker, count=len(places),
                     details={"added": [p.name for p in added], "gone": [p.name for p in vanished]})
    return places


def peek_place(place: DeadPlace, limit: int = 20) -> list[Received]:
    """The first messages of a dead place as they sit on the broker, read without changing
    them (a read, not a change: no audit). Only for adapters that declare ``can_peek_safely``;
    for the others this refuses before connecting, so nothing is redelivered."""
    broker = place.broker
    if not adapter_class(broker.kind).can_peek_safely:
        raise BrokerError(f"{broker.name} ({broker.kind}) cannot browse without changing messages: "
                          "capture them instead", permanent=True)
    with broker.adapter() as adapter:
        return adapter.peek(place.ref, limit)

