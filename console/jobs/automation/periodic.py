"""Periodic work scheduled by Celery beat: broker health and place samples for the charts
(neither changes a letter, a queue or a setting, so neither writes audit rows); discovery of
every broker (places that appear or go are audited, as ``system:discovery``); resuming jobs
whose worker died; expiring jobs nobody approved (audited by console.jobs.door.approvals).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from console.access.scope import scope_of
from console.brokers import BrokerError
from console.jobs.control import is_stale
from console.jobs.door.approvals import expire_unapproved
from console.jobs.door.queueing import enqueue
from console.jobs.kinds import KINDS, kind
from console.models import Broker, DeadLetter, DeadPlace, Job, LetterState, PlaceSample
from console.notifications.events import notify
from console.services.brokers import asked, check_broker, do_discover

log = logging.getLogger(__name__)


def check_brokers() -> dict[str, bool]:
    """Connect to every broker and record whether it answered; tell those who subscribed to
    ``broker.down`` when one has been down for longer than their threshold (minutes)."""
    results = {}
    for broker in Broker.objects.all():
        try:
            check_broker(broker)
            results[broker.name] = True
        except BrokerError as exc:
            log.warning("broker %s unreachable: %s", broker.name, exc.message)
            results[broker.name] = False
        except ValueError as exc:  # a secret that no configured key decrypts
            log.error("broker %s: %s", broker.name, exc)
            results[broker.name] = False
        if not results[broker.name]:
            _tell_down(Broker.objects.get(pk=broker.pk))
    return results


def _tell_down(broker: Broker) -> None:
    if broker.unreachable_since is None:
        return
    minutes = (timezone.now() - broker.unreachable_since).total_seconds() / 60
    since_last = _minutes_between("check-brokers")
    with transaction.atomic():
        notify("broker.down", key=f"down:{broker.pk}:{broker.unreachable_since.isoformat()}", value=minutes,
               previous=max(0.0, minutes - since_last),
               subject=f"{broker.name} has not answered for {minutes:.0f} minutes: {broker.last_error}",
               details={"broker": broker.name, "since": broker.unreachable_since.isoformat(),
                        "error": broker.last_error},
               audience=lambda user: scope_of(user).allows(broker.pk, None))


#: Who the audit says found the places that scheduled discovery adds or marks gone.
DISCOVERY_ACTOR = "system:discovery"


def discover_brokers() -> dict[str, int | str]:
    """Discover every broker, so a new dead place appears (and a vanished one is marked gone)
    without anyone clicking; per broker, how many places it has, or why it did not answer."""
    results: dict[str, int | str] = {}
    for broker in Broker.objects.all():
        try:
            results[broker.name] = len(do_discover(broker, actor=DISCOVERY_ACTOR, scheduled=True))
        except BrokerError as exc:
            log.warning("scheduled discovery of %s failed: %s", broker.name, exc.message)
            results[broker.name] = exc.message
        except ValueError as exc:  # a secret that no configured key decrypts
            log.error("broker %s: %s", broker.name, exc)
            results[broker.name] = str(exc)
    return results


def sample_places() -> int:
    """One PlaceSample per place: depth on the broker, letters held, arrivals since last time;
    those who subscribed hear of a place whose depth, or whose arrivals a minute, crossed their
    threshold since the sample before."""
    now = timezone.now()
    samples = []
    for broker in Broker.objects.prefetch_related("places"):
        places = [p for p in broker.places.all() if not p.gone]
        if not places:
            continue
        depths = _depths(broker, places)
        last = {row["place_id"]: row for row in PlaceSample.objects.filter(place__in=places)
                .order_by("place_id", "-at").distinct("place_id").values("place_id", "at", "depth", "arrivals")}
        counts = DeadLetter.objects.filter(place__in=places).values("place_id").annotate(
            held=Count("id", filter=Q(state=LetterState.HELD)),
        )
        held = {row["place_id"]: row["held"] for row in counts}
        for place in places:
            latest = last.get(place.pk)
            arrivals = DeadLetter.objects.filter(place=place, captured_at__gt=latest["at"]).count() if latest else 0
            samples.append(PlaceSample(place=place, at=now, depth=depths.get(place.pk),
                                       held=held.get(place.pk, 0), arrivals=arrivals))
            _tell_place(place, depths.get(place.pk), arrivals, latest, now)
    PlaceSample.objects.bulk_create(samples)
    return len(samples)


def _tell_place(place: DeadPlace, depth: int | None, arrivals: int, latest: Mapping[str, Any] | None,
                now: datetime) -> None:
    """``place.depth`` and ``place.growth`` (letters a minute since the sample before, against
    the one before that at the usual pace), when they cross a subscriber's threshold."""
    with transaction.atomic():
        if depth:
            notify("place.depth", key=f"depth:{place.pk}", place=place, value=depth,
                   previous=latest["depth"] if latest else None,
                   subject=f"{place} holds {depth} messages on its broker",
                   details={"depth": depth, "before": latest["depth"] if latest else None})
        if latest and arrivals:
            minutes = max((now - latest["at"]).total_seconds() / 60, 1 / 60)
            pace = _minutes_between("sample-places")
            rate, before = arrivals / minutes, latest["arrivals"] / pace
            notify("place.growth", key=f"growth:{place.pk}", place=place, value=rate, previous=before,
                   subject=f"{place} took {rate:.0f} letters a minute (before: {before:.0f})",
                   details={"letters_a_minute": round(rate, 1), "before": round(before, 1)})


def _depths(broker: Broker, places: list[DeadPlace]) -> dict[int, int | None]:
    depths: dict[int, int | None] = {}
    try:
        with asked(broker) as adapter:
            for place in places:
                info = adapter.stats(place.ref)
                depths[place.pk] = info.depth
                DeadPlace.objects.filter(pk=place.pk).update(
                    depth=info.depth, consumers=info.consumers, oldest_at=info.oldest_at,
                    last_seen_at=timezone.now(),
                )
    except BrokerError as exc:
        log.warning("sampling %s: %s", broker.name, exc.message)
    return depths


def _minutes_between(entry: str) -> float:
    """How many minutes apart Celery beat runs ``entry`` of CELERY_BEAT_SCHEDULE."""
    seconds = settings.CELERY_BEAT_SCHEDULE[entry]["schedule"]
    if not isinstance(seconds, int | float):
        raise TypeError(f"CELERY_BEAT_SCHEDULE[{entry!r}] is not a number of seconds: {seconds!r}")
    return seconds / 60


def resume_stale_jobs() -> list[int]:
    """Queue again, through the door's one enqueue, the jobs whose worker died (a running job
    with an old heartbeat) and the queued jobs whose task message was lost. Claiming is
    guarded, so a job still alive in another worker is left alone."""
    stale_before = timezone.now() - timedelta(seconds=settings.DLO_JOB_STALE_SECONDS)
    candidates = Job.objects.filter(
        Q(status__in=Job.IN_WORKER) | Q(status=Job.Status.QUEUED, created_at__lt=stale_before),
        kind__in=[name for name in KINDS if kind(name).in_worker],  # the keeper resumes its own
    )
    resumed = [job for job in candidates if job.status == Job.Status.QUEUED or is_stale(job)]
    for job in resumed:
        enqueue(job)
    return [job.pk for job in resumed]


def expire_unapproved_jobs() -> list[int]:
    """Expire the jobs nobody approved within DLO_APPROVAL_EXPIRY_SECONDS (audited)."""
    return expire_unapproved()
