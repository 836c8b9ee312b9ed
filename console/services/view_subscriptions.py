"""Subscriptions to a saved view's new letters (issue 51): a person hears, through a channel, of
the letters that arrive in a view, at once or as a digest every N minutes with counts by place
and a sample.

- **Where they are matched.** Where the rules decide new letters, once: each batch a round of
  the rules takes from the rules' inbox (console.jobs.automation.rules_at_work) is matched
  against the views that have subscriptions in one pass over that batch
  (console.services.view_conditions), then narrowed to each subscriber's scope. A
  letter counts as new when it was captured within :data:`NEW_SECONDS` (a letter put in the
  inbox again later, by a change of the rule set, is not news), and once per subscription
  (ViewMatch rows, kept a day).
- **What a subscriber hears of.** The letters of the view that the subscriber may see (their
  scope, and the subscription's maker's), a content filter confirmed against what the
  subscriber is shown (console.services.selection.visible_matches); masked as every message is.
- **Told.** At once: one message per round's batch (event ``view.letters``); a digest: one
  message when the first untold match is ``digest_minutes`` old (Celery beat looks every
  minute), with the count by place and the first ids.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from django.db import connection, transaction
from django.db.models import Min
from django.utils import timezone

from console.access.redaction_policy import for_user
from console.access.scope import visible
from console.models import DeadLetter, DeadPlace, Subscription, ViewMatch
from console.notifications.events import creator_of, tell_channel
from console.services.saved_views import letters_filter, readable_views
from console.services.selection import CONTENT_KEYS, visible_matches
from console.services.view_conditions import matching_views

#: A letter captured this long ago (seconds) or less is news to a view's subscribers.
NEW_SECONDS = 3600
#: A message names at most this many letters.
SAMPLE = 10
#: Matches are kept this long once told (seconds): a letter is told once per subscription.
KEPT_SECONDS = 86400
EVENT = "view.letters"


def match_new_letters(letter_ids: Iterable[int], now: datetime | None = None) -> int:
    """Match the letters of a round's batch against the subscribed views; tell the subscriptions
    that hear at once. Returns how many matches were new."""
    now = now or timezone.now()
    ids = list(letter_ids)
    if not ids or not Subscription.objects.filter(view__isnull=False, channel__enabled=True).exists():
        return 0
    # The news among them, named once for every view (a batch of letters decided again is none).
    news = list(DeadLetter.objects.filter(pk__any=ids, captured_at__gte=now - timedelta(seconds=NEW_SECONDS))
                .values_list("id", flat=True))
    if not news:
        return 0
    arrived = DeadLetter.objects.filter(pk__any=news)
    subscriptions = [subscription for subscription in Subscription.objects.filter(
        view__isnull=False, channel__enabled=True).select_related("view", "user", "channel")
        if subscription.user is not None and subscription.user.is_active]
    in_view = matching_views(list({s.view.pk: s.view for s in subscriptions if s.view}.values()), news)
    made = 0
    readable: dict[int, set[int]] = {}  # a subscriber's id -> the views they may open
    makers: dict[str, Any] = {}  # a subscription's maker, by name
    seen: dict[tuple[int, str], dict[int, int]] = {}  # (subscriber, maker) -> letter -> place they may see
    for subscription in subscriptions:
        found = _matched(subscription, in_view, arrived, readable, makers, seen)
        if not found:
            continue
        with transaction.atomic():
            fresh = _kept(subscription, found, now)
            made += len(fresh)
            if fresh and subscription.digest_minutes is None:
                _tell(subscription, fresh, now)
    return made


def tell_digests(now: datetime | None = None) -> int:
    """Send each digest whose first untold match is ``digest_minutes`` old; drop matches told a
    day ago. Returns how many digests were sent."""
    now = now or timezone.now()
    sent = 0
    due = (ViewMatch.objects.filter(told_at__isnull=True, subscription__digest_minutes__isnull=False)
           .values("subscription_id").annotate(first=Min("matched_at")))
    for row in due:
        subscription = Subscription.objects.select_related("view", "user", "channel").get(pk=row["subscription_id"])
        if row["first"] > now - timedelta(minutes=subscription.digest_minutes or 0):
            continue
        with transaction.atomic():
            untold = [Kept(*row) for row in ViewMatch.objects.select_for_update().filter(
                subscription=subscription, told_at__isnull=True).values_list("pk", "letter_id", "place_id")]
            if untold:
                _tell(subscription, untold, now)
                sent += 1
    ViewMatch.objects.filter(told_at__lt=now - timedelta(seconds=KEPT_SECONDS)).delete()
    return sent


def _matched(subscription: Subscription, in_view: dict[int, set[int]], arrived: Any,
             readable: dict[int, set[int]], makers: dict[str, Any],
             seen: dict[tuple[int, str], dict[int, int]]) -> list[tuple[int, int]]:
    """(letter id, place id) of the arrived letters in the view (``in_view``: every view's,
    decided in one pass), as its subscriber finds them: in the subscriber's and the maker's
    scope, a content filter confirmed against what the subscriber is shown. ``readable``,
    ``makers`` and ``seen``: what the other subscriptions of this batch looked up."""
    user, view = subscription.user, subscription.view
    assert user is not None and view is not None
    if user.pk not in readable:
        readable[user.pk] = set(readable_views(user).values_list("pk", flat=True))
    if view.pk not in readable[user.pk] or not in_view[view.pk]:
        return []
    if subscription.created_by not in makers:
        makers[subscription.created_by] = creator_of(subscription)
    scope = (user.pk, subscription.created_by)
    if scope not in seen:
        seen[scope] = dict(visible(makers[subscription.created_by], visible(user, arrived))
                           .values_list("id", "place_id"))
    candidates = sorted(letter_id for letter_id in in_view[view.pk] if letter_id in seen[scope])
    f = letters_filter(view)
    if candidates and set(f) & set(CONTENT_KEYS) and for_user(user) is not None:
        confirmed = visible_matches(user, f, DeadLetter.objects.filter(pk__any=candidates)).letters
        candidates = sorted(confirmed.values_list("id", flat=True))
    return [(letter_id, seen[scope][letter_id]) for letter_id in candidates]


class Kept(NamedTuple):
    """A match kept (a ViewMatch row): what a message is made of."""

    pk: int
    letter_id: int
    place_id: int


def _kept(subscription: Subscription, found: list[tuple[int, int]], now: datetime) -> list[Kept]:
    """The matches not kept before (each letter once per subscription, whichever round is first):
    one statement. A subscription told at once has them told now, in the same statement (its
    message is made in the same transaction)."""
    told = now if subscription.digest_minutes is None else None
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {ViewMatch._meta.db_table} (subscription_id, letter_id, place_id, matched_at, told_at) "
            "SELECT %s, t.letter_id, t.place_id, %s, %s "
            "FROM unnest(%s::bigint[], %s::bigint[]) AS t (letter_id, place_id) "
            "ON CONFLICT (subscription_id, letter_id) DO NOTHING RETURNING id, letter_id, place_id",
            [subscription.pk, now, told, [letter_id for letter_id, _ in found], [place_id for _, place_id in found]])
        rows = cursor.fetchall()
    return [Kept(*row) for row in rows]


def _tell(subscription: Subscription, matches: list[Kept], now: datetime) -> None:
    view = subscription.view
    assert view is not None
    by_place = Counter(match.place_id for match in matches)
    places = DeadPlace.objects.select_related("broker").in_bulk(list(by_place))
    sample = sorted(match.letter_id for match in matches)[:SAMPLE]
    count = len(matches)
    digest = subscription.digest_minutes is not None
    subject = (f"{count} new letter{'s' if count != 1 else ''} in view {view.name}"
               + (f" (digest of {subscription.digest_minutes} min)" if digest else ""))
    details = {"view": view.pk, "view_name": view.name, "new_letters": count, "digest": digest,
               "by_place": {str(places[pk]) if pk in places else str(pk): n for pk, n in sorted(by_place.items())},
               "sample": sample}
    only = places[next(iter(by_place))] if len(by_place) == 1 and next(iter(by_place)) in places else None
    tell_channel(subscription.channel, EVENT, key=f"view:{subscription.pk}:{now.isoformat()}", subject=subject,
                 details=details, place=only)
    if digest:  # a subscription told at once has its matches kept as told (``_kept``)
        ViewMatch.objects.filter(pk__any=[match.pk for match in matches]).update(told_at=now)
