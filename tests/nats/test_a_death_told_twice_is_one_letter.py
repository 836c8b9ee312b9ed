"""A message that dies once is one letter, however many advisories the server sends about it.

nats-server sends a MSG_TERMINATED advisory for every AckTerm, a stale one included: a worker
that terminates a delivery after its ack wait ran out, while the redelivery is already out,
and then terminates the redelivery too, makes the server announce the same message twice
(deliveries 1 and 2). Seen in the NATS crash test: the second letter of each of 200 places
stored twice."""

from __future__ import annotations

import time

import pytest

from console.models import DeadLetter
from tests.flow import in_custody_within, keep
from tests.nats.flow import capture, discover_place, letters_of

pytestmark = [pytest.mark.nats]


def terminated_twice(source, body: bytes) -> tuple:
    """Publish ``body`` and take it twice (its ack wait runs out in between); returns both
    deliveries, not yet terminated."""
    source.publish(body)
    (first,) = source.fetch(1)
    time.sleep(1.2)  # the consumer's ack wait (1 s) runs out: the message goes out again
    (again,) = source.fetch(1, wait=3.0)
    assert again.metadata.num_delivered == 2 and again.metadata.sequence.stream == first.metadata.sequence.stream
    return first, again


def term(source, delivery) -> None:
    before = source.advisories_recorded()
    source.nats(lambda js: delivery.term())
    source.wait_for_advisories(before + 1)


@pytest.mark.django_db
def test_two_advisories_in_one_capture_are_one_letter(nats_broker, failing_consumer):
    source = failing_consumer()
    first, again = terminated_twice(source, b"told twice at once")
    term(source, first)  # stale: the server still announces it
    term(source, again)
    assert source.advisories_recorded() == 2

    place = discover_place(nats_broker, source)
    assert capture(place).done == 1
    (letter,) = letters_of(place)
    assert letter.body_bytes == b"told twice at once"
    assert source.advisories_waiting() == 0  # both announcements are taken off the stream


@pytest.mark.django_db
def test_the_second_advisory_after_the_letter_was_captured_finds_it(nats_broker, failing_consumer):
    source = failing_consumer()
    first, again = terminated_twice(source, b"told again later")
    term(source, first)
    place = discover_place(nats_broker, source)
    assert capture(place).done == 1

    term(source, again)  # long after the first letter is in custody and acknowledged
    assert capture(place).done == 0
    (letter,) = letters_of(place)
    assert letter.body_bytes == b"told again later" and source.advisories_waiting() == 0


@pytest.mark.keeper
@pytest.mark.django_db(transaction=True)
def test_a_kept_place_keeps_one_letter_of_a_death_told_twice(nats_broker, failing_consumer, operator, keeper):
    source = failing_consumer()
    place = keep(discover_place(nats_broker, source), operator)
    keeper.start()
    first, again = terminated_twice(source, b"kept once")
    term(source, first)
    in_custody_within(place, b"kept once", seconds=15)
    term(source, again)
    source.publish(b"a later death")  # announced after the second word on the first
    source.terminate_next()
    in_custody_within(place, b"a later death", seconds=15)
    deadline = time.monotonic() + 15
    while source.advisories_waiting() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert source.advisories_waiting() == 0
    assert sorted(bytes(body) for body in DeadLetter.objects.filter(place=place).values_list("body", flat=True)) \
        == [b"a later death", b"kept once"]
