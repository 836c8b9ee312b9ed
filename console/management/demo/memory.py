"""Demo letters without a broker: a ``demo`` broker of kind memory, its two dead places found by
discovery, and the catalogue's failed deliveries stored through custody with the x-death headers
RabbitMQ would have written. Replay needs a real broker: the memory broker lives in one process.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction

from console.brokers import Received
from console.brokers.memory.adapter import MemoryBroker
from console.brokers.rabbitmq.xdeath import envelope_from_headers
from console.letters.frameworks import enrich
from console.management.demo.catalogue import EXCHANGE, SUBSCRIPTIONS, DemoMessage, messages, publish_times
from console.models import Broker, DeadLetter
from console.services import audit
from console.services.brokers import do_add_broker, do_discover
from console.services.custody import store_captured

BROKER_NAME = "demo"


def _dead_letter(message: DemoMessage, queue: str, published_at: datetime, token: int) -> Received:
    died_at = published_at + timedelta(seconds=3)
    subscription = next(s for s in SUBSCRIPTIONS if s.queue == queue)
    headers = {
        **message.headers,
        "x-death": [{
            "count": 1, "reason": "rejected", "queue": queue, "time": died_at.replace(microsecond=0),
            "exchange": EXCHANGE, "routing-keys": [message.routing_key],
        }],
        "x-first-death-exchange": EXCHANGE,
        "x-first-death-queue": queue,
        "x-first-death-reason": "rejected",
    }
    envelope = enrich(envelope_from_headers(headers), headers)
    envelope.details.setdefault("dead_letter_exchange", subscription.dead_letter_exchange)
    return Received(
        token=token, body=message.body, headers=headers, properties=message.properties(published_at),
        envelope=envelope, message_id=message.message_id,
    )


def install(*, actor: str) -> tuple[Broker, int]:
    """Add the memory broker and its letters (once); return it and how many letters were stored."""
    broker = Broker.objects.filter(name=BROKER_NAME).first()
    if broker is None:
        broker = do_add_broker(actor=actor, name=BROKER_NAME, kind="memory", url=f"memory://{BROKER_NAME}")
    fake = MemoryBroker.named(BROKER_NAME)
    for subscription in SUBSCRIPTIONS:
        fake.queue(subscription.queue)
        fake.queue(subscription.dead_letter_queue)
    places = {p.name: p for p in do_discover(broker, actor=actor)}
    times = publish_times()
    stored = 0
    for subscription in SUBSCRIPTIONS:
        place = places[subscription.dead_letter_queue]
        if DeadLetter.objects.filter(place=place).exists():
            continue
        batch = [
            _dead_letter(message, subscription.queue, times[index], index)
            for index, message in enumerate(messages())
            if subscription.queue in message.fails_in
        ]
        stored += len(store_captured(place, batch, job=None, actor=actor).new)
    return broker, stored


def retire(*, actor: str) -> int:
    """A real RabbitMQ holds the demo letters now: the memory broker an earlier start made goes,
    with its places and letters (a copy of the same catalogue, which its places, found by no
    process any more, would show as "gone"), audited once. How many letters went."""
    broker = Broker.objects.filter(name=BROKER_NAME, kind="memory").first()
    if broker is None:
        return 0
    with transaction.atomic():
        letters = DeadLetter.objects.filter(broker=broker)
        count = letters.count()
        audit.record("demo.retired", actor=actor, broker=broker, count=count,
                     reason="the demo's letters die on RabbitMQ now; the memory broker's copy goes")
        letters.delete()
        broker.places.all().delete()
        broker.delete()
    return count
