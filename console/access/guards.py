"""The scope guard of every job request (console.jobs.requests) and approval: the places a job
touches and the queues it publishes into must all be within what the actor may act on.

A user limited to brokers may act on any queue of those brokers. A user limited to places may
act on those places, and publish only into those places or into the origin queues of the
letters held there (where a replay of them would go anyway): never into any other queue of the
broker.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Q, QuerySet

from console.access.scope import OutOfScope, scope_of


def guard_letters(actor, letters: QuerySet) -> None:
    """Refuse a selection (e.g. one being previewed) that holds any letter outside the actor's scope."""
    scope = scope_of(actor)
    if scope.unlimited:
        return
    outside = letters.exclude(Q(broker_id__in=scope.brokers) | Q(place_id__in=scope.places))
    if outside.exists():
        raise OutOfScope(f"{outside.count()} of the letters are outside what you may act on")


def guard_places(actor, place_ids: Iterable[int]) -> None:
    """Refuse when any of these dead places is outside the actor's scope (a place that no
    longer exists is outside every limited scope)."""
    scope = scope_of(actor)
    if scope.unlimited:
        return
    from console.models import DeadPlace

    wanted = {int(pk) for pk in place_ids}
    allowed = {pk for pk, broker_id in DeadPlace.objects.filter(pk__in=wanted).values_list("pk", "broker_id")
               if scope.allows(broker_id, pk)}
    outside = wanted - allowed
    if outside:
        raise OutOfScope(f"{len(outside)} of the dead places this touches are outside what you may act on")


def guard_reach(actor, place_ids: Iterable[int], targets: Iterable) -> None:
    """Refuse a job (asked for, or to be approved) that touches any dead place, or publishes
    into any target queue (``broker_id``, ``name``, ``scope``), outside the actor's scope."""
    guard_places(actor, place_ids)
    for target in targets:
        guard_target(actor, target.broker_id, target.name, target.scope)


def guard_target(actor, broker_id: int, name: str, scope_name: str = "") -> None:
    """Refuse publishing into the queue ``name`` (in ``scope_name``, e.g. a vhost) of a broker
    unless the actor may act on it."""
    scope = scope_of(actor)
    if scope.unlimited or broker_id in scope.brokers:
        return
    from console.models import DeadLetter, DeadPlace

    places = DeadPlace.objects.filter(pk__in=scope.places, broker_id=broker_id, scope=scope_name)
    if places.filter(name=name).exists():
        return
    if DeadLetter.objects.filter(place__in=places, origin_queue=name).exists():
        return
    raise OutOfScope(f"the queue {name!r} is outside what you may act on: you may publish only into "
                     "your dead places and the origins of their letters")
