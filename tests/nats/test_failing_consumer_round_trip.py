"""A real failing consumer on JetStream: its dead letters are discovered, captured with the
right envelope, replayed to their subject, and the consumer then receives each exactly once."""

from __future__ import annotations

import pytest

from console.models import AuditEvent, DeadLetter, DeadPlace
from tests.nats.flow import capture, discover_place, letters_of, replay

pytestmark = [pytest.mark.nats, pytest.mark.django_db]


def test_max_deliver_death_is_captured_replayed_once_and_the_original_deleted(nats_broker, failing_consumer):
    source = failing_consumer()
    seq = source.publish(b'{"order": 42}', headers={"Nats-Msg-Id": "order-42", "tenant": "acme"})
    source.fail_until_dead(1)

    place = discover_place(nats_broker, source)
    assert (place.kind, place.discovered_by, place.origins, place.depth) == (
        "consumer", "advisory", [source.consumer], 1)

    job = capture(place)
    assert job.done == 1
    (dead,) = letters_of(place)
    assert dead.body_bytes == b'{"order": 42}'
    assert dead.headers == {"Nats-Msg-Id": "order-42", "tenant": "acme"}
    assert dead.message_id == "order-42"
    assert (dead.origin_address, dead.origin_queue, dead.reason, dead.death_count) == (
        source.subject(), source.consumer, "max_deliver", source.MAX_DELIVER)
    assert dead.last_failed_at is not None
    assert dead.envelope_details["stream"] == source.stream and dead.envelope_details["stream_seq"] == seq
    assert source.stored(seq) is not None, "capture must leave the original for the stream's other consumers"
    emptied = DeadPlace.objects.get(pk=place.pk)
    assert (emptied.depth, emptied.oldest_at) == (0, None)

    replay([dead])
    dead.refresh_from_db()
    assert dead.state == "replayed"
    received = source.fetch()
    assert [m.data for m in received] == [b'{"order": 42}']
    assert received[0].headers["x-dlo-replay-id"] == dead.replay_id
    assert received[0].headers["tenant"] == "acme"
    assert received[0].subject == source.subject()
    source.nats(lambda js: received[0].ack_sync())
    assert source.fetch(wait=0.5) == [], "the consumer must receive the replay exactly once"
    assert source.stored(seq) is None, "the original is deleted once the replay is stored"
    assert AuditEvent.objects.filter(action="replay", outcome="confirmed").get().letter_ids == [dead.id]


def test_ack_term_is_a_terminated_letter_and_replays_to_its_subject(nats_broker, failing_consumer):
    source = failing_consumer()
    source.publish(b"cannot ever work", leaf="payments")
    seq = source.terminate_next()

    place = discover_place(nats_broker, source)
    capture(place)
    (dead,) = letters_of(place)
    assert (dead.reason, dead.death_count, dead.origin_address, dead.origin_queue) == (
        "terminated", 1, source.subject("payments"), source.consumer)
    assert dead.message_id == f"{source.stream}:{seq}"

    replay([dead])
    (again,) = source.fetch()
    assert again.data == b"cannot ever work" and again.subject == source.subject("payments")
    assert again.headers["Nats-Msg-Id"] == DeadLetter.objects.get(pk=dead.pk).replay_id
    assert source.stored(seq) is None


def test_a_replay_that_dies_again_comes_back_linked_to_its_parent(nats_broker, failing_consumer):
    source = failing_consumer()
    source.publish(b"still broken")
    source.fail_until_dead(1)
    place = discover_place(nats_broker, source)
    capture(place)
    (first,) = letters_of(place)
    job = replay([first])

    source.fail_until_dead(2)  # the replayed copy dies again
    capture(place)
    returned = DeadLetter.objects.filter(place=place).exclude(pk=first.pk).get()
    assert returned.parent_id == first.id
    assert returned.body_bytes == b"still broken"
    job.refresh_from_db()
    assert job.returned == 1
