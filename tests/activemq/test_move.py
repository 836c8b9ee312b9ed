"""A move publishes letters to a queue the operator names; names ActiveMQ would fan out to
several queues (wildcards, composites) are refused and the letters stay held."""

from __future__ import annotations

import pytest

from console.models import DeadLetter, LetterState
from tests.activemq import flow

pytestmark = pytest.mark.activemq


def test_move_to_a_chosen_queue(amq, names, nacked, make_broker, operator):
    queue, dlq = nacked([b"parcel 1", b"parcel 2"])
    parked = names("parked")
    place = flow.discovered(make_broker(known_queues=[queue]), operator, dlq)
    flow.capture(place, operator)
    ids = list(DeadLetter.objects.filter(place=place).order_by("id").values_list("id", flat=True))

    job = flow.move(operator, ids, parked)
    assert (job.done, job.failed) == (2, 0), job.log
    assert [f.body for f in amq.receive_all(parked)] == [b"parcel 1", b"parcel 2"]
    assert amq.browse(queue) == []
    assert set(DeadLetter.objects.filter(id__in=ids).values_list("replayed_to", flat=True)) == {parked}


def test_wildcard_and_composite_targets_are_refused(amq, names, nacked, make_broker, operator):
    queue, dlq = nacked([b"parcel 1"])
    place = flow.discovered(make_broker(known_queues=[queue]), operator, dlq)
    flow.capture(place, operator)
    (letter,) = DeadLetter.objects.filter(place=place)

    for target in (f"{queue}.>", f"{names('a')},{names('b')}"):
        job = flow.move(operator, [letter.pk], target)
        assert (job.done, job.failed) == (0, 1)
        assert any("several destinations" in line["message"] for line in job.log)
        letter.refresh_from_db()
        assert letter.state == LetterState.HELD
    assert amq.browse(queue) == []
