"""Events: what the console tells people of (:data:`EVENTS`), who hears of one, and what they
are told.

:func:`notify` is called where an event happens (services and jobs), inside its transaction.
It never sends anything itself: it queues one Delivery per channel that should hear of it
(console.notifications.delivery, which sends it after the commit, with retries and backoff).
So a slow or broken receiver never holds up the action that raised the event.

- **Who hears.** A subscription names its events, and may name one place and a threshold. Its
  user, or every member of its group of users, must be active and may see the place (their
  scope); for a group, every member must. Some events also name an audience: a job waiting for
  approval is told only to those who may approve it. Nor does a subscription hear beyond the
  scope of whoever made it, and an admin limited to some places subscribes people only to those.
  An event spread over places (:class:`Spread`) tells each channel only the part its
  subscriptions may hear of.
- **What they are told.** Content (exception messages and the like) is masked as for a viewer
  (console.access.redaction_policy).
- **What a message holds** (its ``body``, as a webhook receives it): ``event``, ``about`` (what
  the event means), ``subject``, ``place`` (its name, or null), ``details`` and ``at``; a storm
  of one key adds ``count`` and ``latest`` (console.notifications.delivery).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Q
from django.utils import timezone

from console.access.redaction_policy import for_everyone
from console.access.scope import Scope, scope_of
from console.models import Channel, DeadPlace, Delivery, Subscription
from console.notifications.delivery import queue

#: Event name -> what it means (the API and the page list these; subscriptions name them).
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
    "objective.at_risk": "an objective on how long letters wait is at risk (past 80% of its time)",
    "objective.breached": "an objective on how long letters wait is breached",
    "objective.recovered": "an objective at risk or breached is met again",
    "view.letters": "new letters in a saved view, at once or as a digest (a subscription to the view)",
}

#: Who of a subscription's members may be told of an event (those who may approve a job, ...).
Audience = Callable[[Any], bool]


@dataclass(frozen=True)
class Spread:
    """An event about letters of several places (a reopened group's new letters): ``counts`` by
    place, and ``told`` making the subject and details of a message from a count and the place
    it is about (None when several). Each channel is told the count over the places its
    subscriptions may hear of, never one including letters of other places."""

    counts: dict[DeadPlace, int]
    told: Callable[[int, DeadPlace | None], tuple[str, dict[str, Any]]]


def listened(event: str) -> bool:
    """Whether a subscription on an enabled channel hears ``event`` at all: one plain statement,
    for a caller that would do work only to tell it (custody's look for new failure groups,
    on every batch a capture stores)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT EXISTS (SELECT 1 FROM {Subscription._meta.db_table} s JOIN {Channel._meta.db_table} c "
            "ON c.id = s.channel_id WHERE s.events @> %s::jsonb AND c.enabled)", [json.dumps([event])])
        (heard,) = cursor.fetchone()
    return bool(heard)


def notify(event: str, *, key: str, subject: str, place: DeadPlace | None = None, details: dict[str, Any] | None = None,
           value: float | None = None, previous: float | None = None,
           audience: Audience | None = None, spread: Spread | None = None) -> list[Delivery]:
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
    made = []
    for channel in channels.values():
        about = place
        if spread is not None:
            places = heard[channel.pk]
            about = next(iter(places)) if len(places) == 1 else None
            subject, details = spread.told(sum(spread.counts[p] for p in places), about)
        made.append(tell_channel(channel, event, key=key, subject=subject, details=details, place=about))
    return made


def tell_channel(channel: Channel, event: str, *, key: str, subject: str, details: dict[str, Any] | None,
                 place: DeadPlace | None) -> Delivery:
    """Queue one message to one channel, its content masked as for a viewer: :func:`notify`'s, and
    a subscription's own (a saved view's new letters, console.services.view_subscriptions)."""
    redactor = for_everyone()
    body = {"event": event, "about": EVENTS[event], "subject": redactor.string(subject),
            "place": str(place) if place is not None else None,
            "details": redactor.value(details or {}), "at": timezone.now().isoformat()}
    return queue(channel, event, key, place, body)


def _members(subscription: Subscription) -> list[Any]:
    """Who the subscription speaks for: its user, or every member of its group of users."""
    if subscription.user is not None:
        return [subscription.user]
    return list(subscription.group.user_set.all()) if subscription.group is not None else []


def creator_of(subscription: Subscription) -> Any:
    """Whoever made the subscription: a user, or the name of a script or a command (unlimited,
    as console.access.scope says of string actors)."""
    creator = get_user_model().objects.filter(username=subscription.created_by).first()
    return creator if creator is not None else subscription.created_by


def _creator_scope(subscription: Subscription) -> Scope:
    """The scope of whoever made the subscription: a subscription never hears beyond it, so an
    admin limited to A cannot make anyone hear of B through one."""
    return scope_of(creator_of(subscription))


def _may_hear(subscription: Subscription, place: DeadPlace | None, audience: Audience | None) -> bool:
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


def _may_hear_of(subscription: Subscription, places: Iterable[DeadPlace],
                 audience: Audience | None) -> set[DeadPlace]:
    """The places of a spread event this subscription hears of: its own place (or any), that
    its creator and every member may see; none when a member is inactive or not the audience."""
    members = _members(subscription)
    if not members or any(not user.is_active or (audience is not None and not audience(user)) for user in members):
        return set()
    scopes = [_creator_scope(subscription), *(scope_of(user) for user in members)]
    return {place for place in places
            if subscription.place_id in (None, place.pk)
            and all(scope.allows(place.broker_id, place.pk) for scope in scopes)}

