"""Bodies survive byte for byte (binary, non-UTF-8, 5 MiB) through capture and replay, and a
hostile header value is stored and sent back as it was."""

from __future__ import annotations

import os

import pytest

from console.models import DeadLetter
from tests.activemq import flow

pytestmark = pytest.mark.activemq

HOSTILE = '<script>alert("x")</script> ; DROP TABLE letters; --\\ \u202e'


def test_binary_large_and_hostile_letters_round_trip(amq, names, make_broker, operator):
    queue, dlq = names.individual("uploads")
    binary = bytes(range(256)) * 4 + b"\xc3\x28\x00\xff"  # not UTF-8, with NUL bytes
    large = os.urandom(5 * 1024 * 1024)
    amq.send(queue, binary, bytes_message=True)
    amq.send(queue, large, bytes_message=True)
    amq.send(queue, b"plain", headers={"note": HOSTILE})
    amq.fail_all(queue, 3)
    amq.wait_for(dlq, 3)

    place = flow.discovered(make_broker(known_queues=[queue]), operator, dlq)
    assert flow.capture(place, operator).done == 3
    letters = list(DeadLetter.objects.filter(place=place).order_by("id"))
    assert [letter.body_bytes for letter in letters] == [binary, large, b"plain"]
    assert letters[1].body_size == 5 * 1024 * 1024
    assert letters[2].headers["note"] == HOSTILE

    job = flow.replay(operator, [letter.pk for letter in letters])
    assert job.done == 3, job.log
    frames = amq.receive_all(queue)
    assert [f.body for f in frames] == [binary, large, b"plain"]
    assert frames[2].headers["note"] == HOSTILE
    assert "content-length" not in frames[2].headers
