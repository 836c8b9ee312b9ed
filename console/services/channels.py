"""Channels and subscriptions: the admins' audited changes, and a test message through a channel.

A channel's kind checks its target (console.notifications.kinds); this module adds what holds
for every kind: who may change channels (admins), the targets this site allows
(DLO_NOTIFY_TARGETS), a target's credentials kept encrypted and shown as ``***`` (in the audit
too, console.channel_targets), and the audit row of every change.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, User
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from console.access.actors import Actor
from console.access.roles import MANAGE_USERS, has
from console.access.scope import OutOfScope, scope_of
from console.channel_targets import MASK, split_target
from console.models import Channel, DeadPlace, Delivery, SavedView, Subscription
from console.notifications.delivery import send_after_commit
from console.notifications.events import EVENTS
from console.notifications.kinds.base import NotifyError
from console.notifications.registry import kind_of
from console.services import audit
from console.services.audit import actor_name
from console.services.saved_views import readable_views
from console.services.view_subscriptions import EVENT as VIEW_EVENT


@transaction.atomic
def notify_test(channel: Channel, *, actor: Actor) -> Delivery:
    """A test message through ``channel``, sent at once (not grouped), audited."""
    body: dict[str, Any] = {"event": "test", "about": "a test message", "subject": f"test of channel {channel.name}",
            "place": None, "details": {"asked by": actor_name(actor)}, "at": timezone.now().isoformat(), "count": 1}
    delivery = Delivery.objects.create(channel=channel, event="test", key=f"test:{timezone.now().isoformat()}",
                                       subject=body["subject"], body=body, send_after=timezone.now())
    audit.record("channel.test", actor=actor, details={"channel": channel.pk, "delivery": delivery.pk})
    send_after_commit(delivery)
    return delivery


# -- channels and subscriptions (admins; audited) ----------------------------------------------

def _admin(actor: Actor) -> None:
    if not has(actor, MANAGE_USERS):
        raise NotifyError("channels and subscriptions are an admin's")


def _checked_target(kind: str, target: str) -> tuple[str, str | None]:
    """``(target, the secret the target is or None)`` of a channel of ``kind``, checked by the
    kind, then against the targets this site allows."""
    target, secret = kind_of(kind).parse(target)
    allowed = settings.DLO_NOTIFY_TARGETS
    if allowed and not any(re.fullmatch(pattern, target) for pattern in allowed):
        raise NotifyError(f"{split_target(target)[0]!r} is not among the targets this site allows "
                          "(DLO_NOTIFY_TARGETS)")
    longest = Channel._meta.get_field("target").max_length
    if longest is not None and len(split_target(target)[0]) > longest:
        raise NotifyError("the target is too long once its credentials are shown as ***")
    return target, secret


@transaction.atomic
def do_add_channel(*, actor: Actor, name: str, kind: str, target: str, secret: str = "") -> Channel:
    """A channel; admins may point it at any URL or address (see the README for restricting targets).
    The credentials in its target are kept encrypted and shown as ``***``, in the audit too
    (console.channel_targets)."""
    _admin(actor)
    kind_of(kind)  # an unknown kind is refused before anything else is checked
    name, target = (name or "").strip(), (target or "").strip()
    if not name or not target:
        raise NotifyError("a channel needs a name and a target")
    target, own_secret = _checked_target(kind, target)
    secret = secret if own_secret is None else own_secret
    if Channel.objects.filter(name=name).exists():
        raise NotifyError(f"a channel named {name!r} exists already")
    return _added(actor, name=name, kind=kind, target=target, secret=secret, created_by=actor_name(actor))


def _added(actor: Actor, *, name: str, kind: str, target: str, secret: str, created_by: str) -> Channel:
    """Make a checked channel and audit it (``channel.added``, its target as shown)."""
    channel = Channel(name=name, kind=kind, created_by=created_by)
    channel.set_target(target)
    channel.secret = secret
    channel.save()
    audit.record("channel.added", actor=actor, details={
        "channel": channel.pk, "name": name, "kind": kind, "target": channel.target,
        "target_credentials": channel.target_has_credentials, "secret": bool(secret)})
    return channel


@transaction.atomic
def do_change_channel(channel: Channel, *, actor: Actor, name: str | None = None, target: str | None = None,
                      enabled: bool | None = None) -> Channel:
    """Change a channel's name, target or whether it is enabled (``None`` keeps a value). A
    target given as it is shown (with ``***``) keeps the stored one; any other replaces it
    whole. The credentials of a target go only where they were typed for, as a broker's
    password does (console.services.brokers): a changed target still holding ``***`` is
    refused, type its credentials again. The audit row names what changed in shown forms."""
    _admin(actor)
    channel = Channel.objects.select_for_update().get(pk=channel.pk)
    changes: dict[str, Any] = {}
    if name is not None and name.strip() != channel.name:
        name = name.strip()
        if not name:
            raise NotifyError("a channel needs a name")
        if Channel.objects.filter(name=name).exclude(pk=channel.pk).exists():
            raise NotifyError(f"a channel named {name!r} exists already")
        changes["name"] = {"from": channel.name, "to": name}
        channel.name = name
    if target is not None and target.strip() != channel.target:
        target = target.strip()
        if not target:
            raise NotifyError("a channel needs a target")
        if MASK in target:
            raise NotifyError("the target is not the saved one: type its credentials again (the stored ones "
                              "go only to the target they were saved with)")
        target, own_secret = _checked_target(channel.kind, target)
        before = channel.target
        channel.set_target(target)
        if own_secret is not None:
            channel.secret = own_secret
        changes["target"] = {"from": before, "to": channel.target,
                             "credentials": "typed" if channel.target_has_credentials else "none"}
    if enabled is not None and enabled != channel.enabled:
        changes["enabled"] = {"from": channel.enabled, "to": enabled}
        channel.enabled = enabled
    if not changes:
        return channel
    channel.save()
    audit.record("channel.changed", actor=actor, details={"channel": channel.pk, "name": channel.name,
                                                          "changed": changes})
    return channel


@transaction.atomic
def do_delete_channel(channel: Channel, *, actor: Actor) -> None:
    """Delete a channel, its subscriptions and its delivery log (the audit row counts them)."""
    _admin(actor)
    channel = Channel.objects.select_for_update().get(pk=channel.pk)
    details = {"channel": channel.pk, "name": channel.name, "kind": channel.kind, "target": channel.target,
               "subscriptions": channel.subscriptions.count(), "deliveries": channel.deliveries.count()}
    channel.delete()
    audit.record("channel.deleted", actor=actor, target=f"channel {details['name']}", details=details)


def do_subscribe(*, actor: Actor, channel: Channel, events: Iterable[str], user: User | None = None,
                 group: Group | None = None, place: DeadPlace | None = None, threshold: int | None = None,
                 view: SavedView | None = None, digest_minutes: int | None = None) -> Subscription:
    """Subscribe a user, or a group of users, to events through a channel (of one place, or of
    all). An admin limited to some places may subscribe anyone only to a place within their
    own limits: one about every place, or about another place, is audited
    (``subscription.refused``) and refused (OutOfScope, 403)."""
    _admin(actor)
    scope = scope_of(actor)
    why = ""
    if place is None and not scope.unlimited:
        why = "you are limited to some places: a subscription must name one of them, not every place"
    elif place is not None and not scope.allows(place.broker_id, place.pk):
        why = "that place is outside what you may see: you may subscribe people only to your own places"
    if why:
        with transaction.atomic():
            # Naming no place, the row is read by those without limits only (the place asked
            # for may be one the refused admin is not to learn more of).
            audit.record("subscription.refused", actor=actor, outcome="refused", details={
                "channel": channel.name, "why": why, "place": place.pk if place is not None else None,
                "user": user.get_username() if user else None, "group": group.name if group else None})
        raise OutOfScope(why)
    return _subscribe(actor=actor, channel=channel, events=events, user=user, group=group, place=place,
                      threshold=threshold, view=view, digest_minutes=digest_minutes)


@transaction.atomic
def _subscribe(*, actor: Actor, channel: Channel, events: Iterable[str], user: User | None, group: Group | None,
               place: DeadPlace | None, threshold: int | None, view: SavedView | None = None,
               digest_minutes: int | None = None) -> Subscription:
    events = list(dict.fromkeys(events or ([VIEW_EVENT] if view is not None else [])))
    unknown = [event for event in events if event not in EVENTS]
    if not events or unknown:
        raise NotifyError(f"events must be some of {', '.join(EVENTS)}" + (f"; unknown: {unknown}" if unknown else ""))
    if (user is None) == (group is None):
        raise NotifyError("a subscription is for one user or one group of users")
    if threshold is not None and threshold < 0:
        raise NotifyError("threshold must be 0 or more")
    _check_view(events, view, user, place, digest_minutes)
    subscription = Subscription.objects.create(channel=channel, user=user, group=group, events=events, place=place,
                                               threshold=threshold, view=view, digest_minutes=digest_minutes,
                                               created_by=actor_name(actor))
    audit.record("subscription.added", actor=actor, place=place,
                 details={"subscription": subscription.pk, "channel": channel.name, "events": events,
                          "user": user.get_username() if user else None, "group": group.name if group else None,
                          "threshold": threshold, "view": view.pk if view else None, "digest_minutes": digest_minutes})
    return subscription


#: A digest is sent at most every day.
MAX_DIGEST_MINUTES = 24 * 60


def _check_view(events: list[str], view: SavedView | None, user: User | None, place: DeadPlace | None,
                digest_minutes: int | None) -> None:
    """A subscription to a view hears only of its new letters, for one person who may open it."""
    if view is None:
        if VIEW_EVENT in events or digest_minutes is not None:
            raise NotifyError(f"{VIEW_EVENT} and digest_minutes are for a subscription to a view (name the view)")
        return
    if events != [VIEW_EVENT]:
        raise NotifyError(f"a subscription to a view hears of {VIEW_EVENT} alone")
    if user is None or place is not None:
        raise NotifyError("a subscription to a view is for one user (its letters are theirs to see), of no place")
    if not readable_views(user).filter(pk=view.pk).exists():
        raise NotifyError(f"{user.get_username()} may not open that view")
    if digest_minutes is not None and not 1 <= digest_minutes <= MAX_DIGEST_MINUTES:
        raise NotifyError(f"digest_minutes is 1 to {MAX_DIGEST_MINUTES} (or none: at once)")


def user_named(username: str | None) -> User | None:
    """The user named ``username`` (None for none); NotifyError when there is no such user."""
    if not username:
        return None
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise NotifyError(f"no user {username!r}")
    return user


# -- a person's own subscriptions ------------------------------------------------------------------

#: What ``created_by`` says of a person's own e-mail channel, before their user id (a username
#: may be as long as the column).
OWN = "self:"


def _own_by(user: User) -> str:
    return f"{OWN}{user.pk}"


@transaction.atomic
def do_subscribe_myself(*, actor: Actor, view: SavedView, digest_minutes: int | None = None) -> Subscription:
    """A person subscribes themselves to a view's new letters, by e-mail to their account's
    address, at once or as a digest every ``digest_minutes``: no admin needed, as the letters
    told are theirs to see (their scope, masked for them). Their own e-mail channel is made on
    first use and follows their address (``own_channel``); both are audited."""
    user = _person(actor)
    channel = own_channel(user)
    if _mine(user, view).exists():
        raise NotifyError("you hear of this view's new letters already: stop first to change how")
    return _subscribe(actor=user, channel=channel, events=[VIEW_EVENT], user=user, group=None, place=None,
                      threshold=None, view=view, digest_minutes=digest_minutes)


@transaction.atomic
def do_unsubscribe_myself(*, actor: Actor, view: SavedView) -> int:
    """A person stops hearing of a view's new letters through their own channel (audited
    ``subscription.removed``); returns how many subscriptions went (0 or 1)."""
    user = _person(actor)
    mine = _mine(user, view)
    gone = list(mine.values_list("pk", flat=True))
    if gone:
        mine.delete()
        audit.record("subscription.removed", actor=user, details={"subscriptions": gone, "view": view.pk})
    return len(gone)


def my_subscription(user: Actor, view: SavedView) -> Subscription | None:
    """The reader's own subscription to the view, if any (the view's page says how they hear)."""
    if not isinstance(user, User) or not user.is_authenticated:
        return None
    return _mine(user, view).first()


def _mine(user: User, view: SavedView) -> QuerySet[Subscription]:
    """The person's subscriptions to the view through their own channel (one at most)."""
    return Subscription.objects.filter(user=user, view=view, channel__created_by=_own_by(user))


def own_channel(user: User) -> Channel:
    """The person's own e-mail channel, to their account's address: made on first use, its
    address changed with theirs (each audited)."""
    address = (user.email or "").strip()
    if not address:
        raise NotifyError("your account has no e-mail address to tell you by: ask an admin to add one")
    target, _ = _checked_target("email", address)
    by = _own_by(user)
    channel = Channel.objects.filter(created_by=by, kind="email").first()
    if channel is not None:
        if channel.target != target:
            before = channel.target
            channel.set_target(target)
            channel.save()
            audit.record("channel.changed", actor=user, details={"channel": channel.pk, "name": channel.name,
                                                                 "changed": {"target": {"from": before,
                                                                                        "to": channel.target}}})
        return channel
    name = f"e-mail to {user.get_username()}"[:90]
    if Channel.objects.filter(name=name).exists():
        name = f"{name} ({user.pk})"
    return _added(user, name=name, kind="email", target=target, secret="", created_by=by)


def _person(actor: Actor) -> User:
    if not isinstance(actor, User) or not actor.is_authenticated:
        raise NotifyError("only a person subscribes themselves")
    return actor
