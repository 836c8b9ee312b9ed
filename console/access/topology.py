"""Where the brokers say dead letters go: the answer the scope guard (console.access.guards)
uses to let a user limited to places publish into a queue that is not one of their places.

Invariant 11, content never widens rights: a letter's origin is read from its own headers
(``x-death``, ``x-original-queue``, ``original-destination``, a stream entry's ``orig_stream``),
which whoever published the message wrote. So a queue becomes a place-limited user's to
publish into only when the broker itself says that queue's dead letters go to one of their
places: each adapter's ``delivery_policies`` (console.letters.policy ``DeliveryPolicy.dead_places``)
reads it from the broker, e.g. RabbitMQ's dead-letter arguments, policies and bindings, a NATS
consumer's ``max_deliver``, a Redis stream's consumer groups, ActiveMQ's per-queue DLQ naming.

One :class:`Topology` is made per request (or per approval) and asks each broker once, for
every queue that request needs, however many letters name them. A broker that cannot be
asked is remembered as such, and the guard refuses rather than trust a header.
"""

from __future__ import annotations

from collections.abc import Iterable

from console.brokers import BrokerError
from console.brokers.base import PlaceRef

#: (broker id, queue name, scope), as the guard names a queue a job publishes into.
Queue = tuple[int, str, str]


class Topology:
    """The dead places each asked queue dead-letters into, as its broker tells; asked lazily,
    once per broker per batch of queues, and kept for the life of this object."""

    def __init__(self) -> None:
        self._fed: dict[Queue, frozenset[tuple[str, str]]] = {}
        self._unasked: dict[Queue, str] = {}  # why the broker could not be asked

    def ask(self, queues: Iterable[Queue]) -> None:
        """Ask each broker, in one call, about those of ``queues`` not asked yet."""
        from console.models import Broker

        wanted: dict[int, list[Queue]] = {}
        for queue in dict.fromkeys(queues):
            if queue not in self._fed and queue not in self._unasked:
                wanted.setdefault(queue[0], []).append(queue)
        for broker_id, asked in wanted.items():
            broker = Broker.objects.filter(pk=broker_id).first()
            if broker is None:
                self._unasked.update((queue, "the broker was removed") for queue in asked)
                continue
            try:
                with broker.adapter() as adapter:
                    told = adapter.delivery_policies([PlaceRef(name, scope) for _, name, scope in asked])
            except BrokerError as exc:
                self._unasked.update((queue, f"{broker.name} could not be asked: {exc.message}") for queue in asked)
                continue
            for queue, policy in zip(asked, told, strict=True):  # one policy per place asked
                self._fed[queue] = frozenset((name, scope) for name, scope in policy.dead_places)

    def dead_places(self, queue: Queue) -> frozenset[tuple[str, str]]:
        """The (name, scope) of the dead places the broker says ``queue`` dead-letters into;
        raises :class:`Unknown` when its broker could not be asked."""
        self.ask([queue])
        if queue in self._unasked:
            raise Unknown(self._unasked[queue])
        return self._fed[queue]


class Unknown(Exception):
    """The broker could not be asked where a queue's dead letters go."""
