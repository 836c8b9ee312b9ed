"""Telling people: channels, subscriptions, and the events the console raises.

:func:`notify` is called where an event happens, inside its transaction. It never sends
anything itself: it writes one Delivery per channel that should hear of it, and hands it to
Celery after the commit (console.jobs.notifications sends it, with retries and backoff). So a
slow or broken receiver never holds up the action that raised the event.

- **Who hears.** A subscription names its events, and may name one place and a threshold. Its
  user, or every member of its group of users, must be active and may see the place (their
  scope); for a group, every member must. Some events also name an audience: a job waiting for
  approval is told only to those who may approve it. Nor does a subscription hear beyond the
  scope of whoever made it, and an admin limited to some places subscribes people only to those.
  An event spread over places (:class:`Spread`) tells each channel only the part its
  subscriptions may hear of.
- **What they are told.** Content (exception messages and the like) is masked as for a viewer
  (console.access.redaction).
- **Storms.** An event with the same key (e.g. ``group.new`` of one fingerprint,
  ``place.depth`` of one place) that happens again while its message still waits
  (DLO_NOTIFY_GROUP_SECONDS) adds to that message's ``count``, so 10,000 letters make one
  message, not 10,000.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from celery import current_app
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from console.access.redaction import Redactor
from console.access.roles import MANAGE_USERS, has
from console.access.scope import OutOfScope, Scope, scope_of
from console.channel_targets import MASK, split_target
from console.models import Channel, DeadPlace, Delivery, Subscription
from console.services import audit
from console.services.audit import Actor, actor_name
from console.refusals import Refusal

#: Event kind -> what it means (the API and the page list these).
EVENTS = {
    "group.new": "a new failure group",
    "group.reopened": "a group marked resolved gets new letters",
    "place.depth": "a place holds more than the threshold on its broker",
    "place.growth": "a place takes in more letters a minute than the threshold",
    "job.approval_needed": "a job waits for approval (sent to those who may approve it)",
    "job.finished": "a job finished",
    "job.failed": "a job failed",
    "job.paused": "a job was paused by its canary",
    "rule.ladder_ran_out": "a rule's retry ladder ran out",
    "rule.failed": "a rule cannot do what it decided (told once, until it acts again)",
    "letter.quarantined": "a letter was quarantined (replay loop)",
    "breaker.opened": "an origin's breaker opened",
    "broker.down": "a broker has not answered for longer than the threshold, in minutes",
}


#: The Celery task that sends a delivery (console.jobs.tasks), named: services do not import jobs.
DELIVER_TASK = "console.deliver"


class NotifyError(Refusal):
    """A channel or subscription the console refuses, with a message for the admin."""


@dataclass(frozen=True)
class Spread:
    """An event about letters of several places (a reopened group's new letters): ``counts`` by
    place, and ``told`` making the subject and details of a message from a count and the place
    it is about (None when several). Each channel is told the count over the places its
    subscriptions may hear of, never one including letters of other places."""

    counts: dict[DeadPlace, int]
    told: Callable[[int, DeadPlace | None], tuple[str, dict]]


def notify(event: str, *, key: str, subject: str, place: DeadPlace | None = None, details: dict | None = None,
           value: float | None = None, previous: float | None = None,
           audience: Callable[[Any], bool] | None = None, spread: Spread | None = None) -> list[Delivery]:
    """Queue messages about one event (inside the caller's transaction) for every channel whose
    subscriptions hear it; returns the deliveries made or added to. An event with a ``value``
    (a depth, minutes down) is heard when it crosses the subscription's threshold (0 without
    one): ``value`` above it, ``previous`` not. An event ``spread`` over places tells each
    channel its own part of it (``subject`` and ``details`` then come from the spread)."""
    if event not in EVENTS:
        raise ValueError(f"unknown event {event!r}")
    subscriptions = Subscription.objects.filter(events__contains=[event], channel__enabled=True)
    if spread is not None:
        subscriptions = subscriptions.filter(Q(place__isnull=True) | Q(place__in=list(spread.counts)))
    elif place is not None:
        subscriptions = subscriptions.filter(Q(place__isnull=True) | Q(place=place))
    else:
        subscriptions = subscriptions.filter(place__isnull=True)
    channels: dict[int, Channel] = {}
    heard: dict[int, set[DeadPlace]] = {}
    for subscription in subscriptions.select_related("channel", "user", "group"):
        if value is not None:
            threshold = subscription.threshold or 0
            if value <= threshold or (previous is not None and previous > threshold):
                continue
        if spread is not None:
            # A channel is as wide as its widest subscription, as for any event.
            places = _may_hear_of(subscription, spread.counts, audience)
            if places:
                channels[subscription.channel_id] = subscription.channel
                heard.setdefault(subscription.channel_id, set()).update(places)
        elif _may_hear(subscription, place, audience):
            channels[subscription.channel_id] = subscription.channel
    if not channels:
        return []
    redactor = Redactor.current()
    made = []
    for channel in channels.values():
        about = place
        if spread is not None:
            places = heard[channel.pk]
            about = next(iter(places)) if len(places) == 1 else None
            subject, details = spread.told(sum(spread.counts[p] for p in places), about)
        body = {"event": event, "about": EVENTS[event], "subject": redactor.string(subject),
                "place": str(about) if about is not None else None,
                "details": redactor.value(details or {}), "at": timezone.now().isoformat()}
        made.append(_queue(channel, event, key, about, body))
    return made


def _queue(channel: Channel, event: str, key: str, place: DeadPlace | None, body: dict) -> Delivery:
    now = timezone.now()
    waiting = (Delivery.objects.select_for_update()
               .filter(channel=channel, key=key, status=Delivery.Status.PENDING, send_after__gt=now).first())
    if waiting is not None:
        waiting.count += 1
        waiting.body = {**waiting.body, "count": waiting.count, "latest": body}
        waiting.save(update_fields=["count", "body"])
        return waiting
    delay = settings.DLO_NOTIFY_GROUP_SECONDS
    delivery = Delivery.objects.create(channel=channel, event=event, key=key[:300], place=place,
                                       subject=body["subject"][:300], body={**body, "count": 1},
                                       send_after=now + timedelta(seconds=delay))
    transaction.on_commit(lambda: current_app.send_task(DELIVER_TASK, args=(delivery.pk,), countdown=delay))
    return delivery


def _members(subscription: Subscription) -> list:
    if subscription.user_id is not None:
        return [subscription.user]
    return list(subscription.group.user_set.all()) if subscription.group_id is not None else []


def _creator_scope(subscription: Subscription) -> Scope:
    """The scope of whoever made the subscription: a subscription never hears beyond it, so an
    admin limited to A cannot make anyone hear of B through one. A name that is no user's is a
    script's or a command's (unlimited, as console.access.scope says of string actors)."""
    creator = get_user_model().objects.filter(username=subscription.created_by).first()
    return scope_of(creator if creator is not None else subscription.created_by)


def _may_hear(subscription: Subscription, place: DeadPlace | None, audience) -> bool:
    members = _members(subscription)
    if not members:
        return False
    creator = _creator_scope(subscription)
    if place is not None and not creator.allows(place.broker_id, place.pk):
        return False
    if place is None and not creator.unlimited:
        return False
    for user in members:
        if not user.is_active:
            return False
        if place is not None and not scope_of(user).allows(place.broker_id, place.pk):
            return False
        if place is None and not scope_of(user).unlimited and audience is None:
            return False  # an event about no place in particular is for those who see everything
        if audience is not None and not audience(user):
            return False
    return True


def _may_hear_of(subscription: Subscription, places: Iterable[DeadPlace], audience) -> set[DeadPlace]:
    """The places of a spread event this subscription hears of: its own place (or any), that
    its creator and every member may see; none when a member is inactive or not the audience."""
    members = _members(subscription)
    if not members or any(not user.is_active or (audience is not None and not audience(user)) for user in members):
        return set()
    scopes = [_creator_scope(subscription), *(scope_of(user) for user in members)]
    return {place for place in places
            if subscription.place_id in (None, place.pk)
            and all(scope.allows(place.broker_id, place.pk) for scope in scopes)}


@transaction.atomic
def notify_test(channel: Channel, *, actor: Actor) -> Delivery:
    """A test message through ``channel``, sent at once (not grouped), audited."""
    body = {"event": "test", "about": "a test message", "subject": f"test of channel {channel.name}",
            "place": None, "details": {"asked by": actor_name(actor)}, "at": timezone.now().isoformat(), "count": 1}
    delivery = Delivery.objects.create(channel=channel, event="test", key=f"test:{timezone.now().isoformat()}",
                                       subject=body["subject"], body=body, send_after=timezone.now())
    audit.record("channel.test", actor=actor, details={"channel": channel.pk, "delivery": delivery.pk})
    transaction.on_commit(lambda: current_app.send_task(DELIVER_TASK, args=(delivery.pk,)))
    return delivery


# -- channels and subscriptions (admins; audited) ----------------------------------------------

def _admin(actor: Actor) -> None:
    if not has(actor, MANAGE_USERS):
        raise NotifyError("channels and subscriptions are an admin's")


def _checked_target(kind: str, target: str, secret: str) -> tuple[str, str]:
    """(target, secret) of a channel of ``kind``, checked; an Apprise URL becomes the secret."""
    if kind in (Channel.Kind.WEBHOOK, Channel.Kind.SLACK) and not target.startswith(("http://", "https://")):
        raise NotifyError("a webhook's target is an http(s) URL")
    if kind == Channel.Kind.EMAIL and "@" not in target:
        raise NotifyError("an e-mail channel's target is an address")
    if kind == Channel.Kind.APPRISE:
        import apprise  # noqa: PLC0415 - loads its plugins; only channels of this kind need it

        if not apprise.Apprise().add(target):
            raise NotifyError("Apprise does not understand this URL (see its list of services)")
        target, secret = f"{target.split('://', 1)[0]}://…", target
    allowed = settings.DLO_NOTIFY_TARGETS
    if allowed and not any(re.fullmatch(pattern, target) for pattern in allowed):
        raise NotifyError(f"{split_target(target)[0]!r} is not among the targets this site allows "
                          "(DLO_NOTIFY_TARGETS)")
    if len(split_target(target)[0]) > Channel._meta.get_field("target").max_length:
        raise NotifyError("the target is too long once its credentials are shown as ***")
    return target, secret


@transaction.atomic
def do_add_channel(*, actor: Actor, name: str, kind: str, target: str, secret: str = "") -> Channel:
    """A channel; admins may point it at any URL or address (see the README for restricting targets).
    The credentials in its target are kept encrypted and shown as ``***``, in the audit too
    (console.channel_targets)."""
    _admin(actor)
    if kind not in Channel.Kind.values:
        raise NotifyError(f"kind must be one of {', '.join(Channel.Kind.values)}")
    name, target = (name or "").strip(), (target or "").strip()
    if not name or not target:
        raise NotifyError("a channel needs a name and a target")
    target, secret = _checked_target(kind, target, secret)
    if Channel.objects.filter(name=name).exists():
        raise NotifyError(f"a channel named {name!r} exists already")
    channel = Channel(name=name, kind=kind, created_by=actor_name(actor))
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
        target, secret = _checked_target(channel.kind, target, "")
        before = channel.target
        channel.set_target(target)
        if channel.kind == Channel.Kind.APPRISE:
            channel.secret = secret
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


def do_subscribe(*, actor: Actor, channel: Channel, events: Iterable[str], user=None, group=None,
                 place: DeadPlace | None = None, threshold: int | None = None) -> Subscription:
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
                      threshold=threshold)


@transaction.atomic
def _subscribe(*, actor: Actor, channel: Channel, events: Iterable[str], user, group,
               place: DeadPlace | None, threshold: int | None) -> Subscription:
    events = list(dict.fromkeys(events or []))
    unknown = [event for event in events if event not in EVENTS]
    if not events or unknown:
        raise NotifyError(f"events must be some of {', '.join(EVENTS)}" + (f"; unknown: {unknown}" if unknown else ""))
    if (user is None) == (group is None):
        raise NotifyError("a subscription is for one user or one group of users")
    if threshold is not None and threshold < 0:
        raise NotifyError("threshold must be 0 or more")
    subscription = Subscription.objects.create(channel=channel, user=user, group=group, events=events, place=place,
                                               threshold=threshold, created_by=actor_name(actor))
    audit.record("subscription.added", actor=actor, place=place,
                 details={"subscription": subscription.pk, "channel": channel.name, "events": events,
                          "user": user.get_username() if user else None, "group": group.name if group else None,
                          "threshold": threshold})
    return subscription


def user_named(username: str | None):
    if not username:
        return None
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise NotifyError(f"no user {username!r}")
    return user
