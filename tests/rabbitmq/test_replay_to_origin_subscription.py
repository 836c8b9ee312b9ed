"""The story of issue 2 on the real broker, through the services and the job runner: a topic
fans out to two subscriptions, one subscription's consumer rejects a message, and the replay
puts it back in that subscription only, once, with the replay id header."""

from __future__ import annotations

import pytest

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import AuditEvent, DeadLetter, Job
from console.services.audit import verify_chain
from console.services.brokers import do_discover
from console.services.custody import REPLAY_ID_HEADER
from tests.rabbitmq.kit import ACK, REJECT

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db]


def subscription(kit, topic: str, name: str) -> tuple[str, str]:
    """A subscription queue on the topic, with its own DLX (fanout) and DLQ."""
    dlx = kit.exchange(kit.name(f"{name}-dlx"), "fanout")
    dead = kit.queue(kit.name(f"{name}-dead"))
    kit.bind(dead, dlx)
    queue = kit.queue(kit.name(name), {"x-dead-letter-exchange": dlx})
    kit.bind(queue, topic, "orders.*")
    return queue, dead


def test_replay_goes_back_to_the_one_subscription_it_failed_in(kit, rabbit_broker, operator):
    topic = kit.exchange(kit.name("orders"), "topic")
    billing, billing_dead = subscription(kit, topic, "billing")
    shipping, shipping_dead = subscription(kit, topic, "shipping")
    kit.publish("orders.created", b'{"id": 1}', exchange=topic, message_id="m-1")
    kit.publish("orders.created", b'{"id": 2}', exchange=topic, message_id="m-2")
    kit.consume(billing, lambda m: REJECT if m.message_id == "m-2" else ACK, count=2)
    kit.consume(shipping, lambda m: ACK, count=2)
    kit.wait_depth(billing_dead, 1)

    places = {p.name: p for p in do_discover(rabbit_broker, actor=operator)}
    place = places[billing_dead]
    assert (place.discovered_by, place.origins, place.depth) == ("binding", [billing], 1)
    assert places[shipping_dead].depth == 0

    capture = request_job("capture", place=place, actor=operator, reason="triage")
    assert run_job(capture.pk) == "succeeded"
    letter = DeadLetter.objects.get(place=place)
    assert (letter.origin_queue, letter.origin_address, letter.routing_key, letter.reason) == (
        billing, topic, "orders.created", "rejected")
    assert kit.depth(billing_dead) == 0

    replay = request_job("replay", actor=operator, reason="billing bug fixed", ids=[letter.id])
    assert run_job(replay.pk) == "succeeded"

    letter.refresh_from_db()
    assert letter.state == "replayed" and letter.replay_id
    (back,) = kit.drain(billing)
    assert back.body == b'{"id": 2}' and back.message_id == "m-2"
    assert back.headers[REPLAY_ID_HEADER] == letter.replay_id
    assert kit.depth(shipping) == 0 and kit.depth(shipping_dead) == 0
    assert Job.objects.get(pk=replay.pk).done == 1
    event = AuditEvent.objects.get(action="replay", job_id=replay.pk)
    assert (event.letter_ids, event.outcome, event.actor_name) == ([letter.id], "confirmed", operator.username)
    assert verify_chain().ok
