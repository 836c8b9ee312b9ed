"""A reader's takes serve its places in turn, and visit only those a delivery marked: a take
over hundreds of quiet places costs the few holding letters (console.brokers.readers.Turns)."""

from __future__ import annotations

from collections import deque

from console.brokers.base import PlaceRef, Received
from console.brokers.readers import Turns
from console.letters.envelope import FailureEnvelope


def letter(body: str) -> Received:
    return Received(token=body, body=body.encode(), headers={}, properties={}, envelope=FailureEnvelope())


class Buffers:
    """What a reader holds per place, and which places each take looked at."""

    def __init__(self, turns: Turns) -> None:
        self.turns = turns
        self.held: dict[PlaceRef, deque[Received]] = {}
        self.visited: list[PlaceRef] = []
        self.arriving: dict[PlaceRef, Received] = {}  # delivered while the place is being read

    def deliver(self, place: PlaceRef, count: int = 1) -> None:
        for n in range(count):
            self.held.setdefault(place, deque()).append(letter(f"{place.name}/{n}"))
        self.turns.mark(place)

    def take_from(self, place: PlaceRef, count: int) -> list[Received]:
        self.visited.append(place)
        waiting = self.held.get(place, deque())
        batch = [waiting.popleft() for _ in range(min(count, len(waiting)))]
        if place in self.arriving:  # a delivery landing just after the buffer was emptied
            waiting.append(self.arriving.pop(place))
            self.turns.mark(place)
        return batch

    def take(self, max_count: int = 100, per_place: int = 5) -> dict[PlaceRef, list[Received]]:
        self.visited = []
        return self.turns.serve(max_count, per_place, self.take_from)


def places(count: int) -> list[PlaceRef]:
    return [PlaceRef(f"dlq-{n:03}") for n in range(count)]


def test_a_take_visits_only_the_places_that_got_letters():
    turns = Turns()
    followed = places(500)
    turns.keep(followed, followed)
    buffers = Buffers(turns)
    assert buffers.take() == {}
    assert buffers.visited == []

    buffers.deliver(followed[7], 2)
    buffers.deliver(followed[300])
    taken = buffers.take()
    assert {place.name: len(messages) for place, messages in taken.items()} == {"dlq-007": 2, "dlq-300": 1}
    assert buffers.visited == [followed[7], followed[300]]
    assert buffers.take() == {} and buffers.visited == []  # emptied: no longer visited


def test_a_place_holding_more_than_its_share_stays_marked_and_waits_its_turn():
    turns = Turns()
    followed = places(4)
    turns.keep(followed, followed)
    buffers = Buffers(turns)
    buffers.deliver(followed[0], 12)  # a stream
    buffers.deliver(followed[2], 1)
    first = buffers.take(per_place=5)
    assert {place.name: len(messages) for place, messages in first.items()} == {"dlq-000": 5, "dlq-002": 1}
    buffers.deliver(followed[1], 1)
    second = buffers.take(max_count=6, per_place=5)
    # The take starts after dlq-002, the last place served: dlq-003, then dlq-000, then dlq-001.
    assert list(second) == [followed[0], followed[1]]
    assert [len(messages) for messages in second.values()] == [5, 1]
    third = buffers.take(per_place=5)
    assert {place.name: len(messages) for place, messages in third.items()} == {"dlq-000": 2}
    assert buffers.take() == {}


def test_a_letter_arriving_while_its_place_is_read_is_not_forgotten():
    turns = Turns()
    followed = places(3)
    turns.keep(followed, followed)
    buffers = Buffers(turns)
    buffers.deliver(followed[1], 1)
    buffers.arriving[followed[1]] = letter("late")
    assert [m.body for m in buffers.take()[followed[1]]] == [b"dlq-001/0"]
    assert [m.body for m in buffers.take()[followed[1]]] == [b"late"]


def test_places_let_go_lose_their_marks_and_new_ones_come_last():
    turns = Turns()
    followed = places(3)
    turns.keep(followed, followed)
    buffers = Buffers(turns)
    buffers.deliver(followed[0])
    buffers.deliver(followed[1])
    newcomer = PlaceRef("dlq-new")
    buffers.deliver(newcomer)  # delivered while being followed, before the turn knows it
    turns.keep([followed[1], followed[2], newcomer], [newcomer])
    assert turns.order == [followed[1], followed[2], newcomer]
    taken = buffers.take()
    assert list(taken) == [followed[1], newcomer]
