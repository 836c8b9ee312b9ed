"""The scope guard of every job request (console.jobs.door.requests) and approval: the places a job
touches and the queues it publishes into must all be within what the actor may act on.

A user limited to brokers may act on any queue of those brokers. A user limited to places may
act on those places, and publish only into those places or into the queues whose dead letters
the broker says go into one of them (console.access.topology): never into any other queue of
the broker. A replay publishes into its letters' origins, so those are guarded the same way:
a letter's headers name its origin, and content never widens rights (invariant 11). A rule
takes letters within its enabler's scope narrowed to its own, and publishes where its enabler
may (console.access.scope.publish_scope_of; invariant 10): its places are guarded with the
first, its targets and origins with the second.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from django.db.models import Q, QuerySet

from console.access.scope import OutOfScope, Scope, publish_scope_of, scope_of
from console.access.topology import Queue, Topology, Unknown


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


def guard_reach(actor, place_ids: Iterable[int], targets: Iterable, origins: Iterable | Callable[[], Iterable] = (),
                *, topology: Topology | None = None) -> None:
    """Refuse a job (asked for, or to be approved) that touches any dead place, or publishes
    into any target queue or letters' origin (each with ``broker_id``, ``name``, ``scope``),
    outside the actor's scope. ``origins`` may be a callable, called only for an actor limited
    to places (the origins of a large selection cost a query); ``topology`` keeps what brokers
    said for the caller's next guard (e.g. one approval asked of several people)."""
    guard_places(actor, place_ids)
    scope = publish_scope_of(actor)
    if scope.unlimited:
        return
    queues = [*targets, *(origins() if callable(origins) else origins)]
    _guard_queues(scope, [(q.broker_id, q.name, q.scope) for q in queues], topology or Topology())


class Unconfirmed(OutOfScope):
    """The queue's broker could not be asked where its dead letters go, so publishing into it
    is refused for now (it may be allowed once the broker answers)."""


def queue_refusals(actor, queues: Iterable[Queue], *, topology: Topology | None = None) -> dict[Queue, OutOfScope]:
    """Each of ``queues`` the actor may not publish into, with the refusal the guard would
    raise (an :class:`Unconfirmed` one when the broker could not be asked); the brokers are
    asked once for all of them. What a rule's check step (console.services.rules.checks) uses
    to refuse only the letters bound for a refused queue, and say why."""
    scope = publish_scope_of(actor)
    if scope.unlimited:
        return {}
    return dict(_queue_refusals(scope, list(queues), topology or Topology()))


def _guard_queues(scope: Scope, queues: list[Queue], topology: Topology) -> None:
    """Every queue must be of a broker the scope allows whole, one of its places, or a queue
    the broker says dead-letters into one of its places; a queue without a name (a letter whose
    origin is unknown) publishes nowhere and is refused by the publish itself."""
    for _, refusal in _queue_refusals(scope, queues, topology):
        raise refusal


def _queue_refusals(scope: Scope, queues: list[Queue], topology: Topology):
    """(queue, refusal) for each of ``queues`` the scope does not let one publish into."""
    from console.models import DeadPlace

    queues = [q for q in dict.fromkeys(queues) if q[1] and not scope.allows(q[0], None)]
    if not queues:
        return
    mine: dict[int, set[tuple[str, str]]] = {}
    for broker_id, name, place_scope in DeadPlace.objects.filter(pk__in=scope.place_ids).values_list(
            "broker_id", "name", "scope"):
        mine.setdefault(broker_id, set()).add((name, place_scope))
    queues = [q for q in queues if (q[1], q[2]) not in mine.get(q[0], set())]
    topology.ask(q for q in queues if q[0] in mine)
    for queue in queues:
        broker_id, name, _ = queue
        if broker_id not in mine:
            yield queue, OutOfScope(f"the queue {name!r} is outside what you may act on: you may publish only "
                                    "into your dead places and the queues their broker dead-letters into them")
            continue
        try:
            fed = topology.dead_places(queue)
        except Unknown as exc:
            yield queue, Unconfirmed(f"the queue {name!r} is outside what you may act on until its broker says "
                                     f"where its dead letters go ({exc}); a letter's own headers do not say it")
            continue
        if not fed & mine[broker_id]:
            yield queue, OutOfScope(f"the queue {name!r} is outside what you may act on: its broker does not say "
                                    "that its dead letters go into your dead places (a letter's own headers naming "
                                    "it as their origin do not count); you may publish only into your dead places "
                                    "and the queues their broker dead-letters into them")
