"""Field values that are not UTF-8, field names that are not either, names and values with NUL
(which PostgreSQL's text cannot hold), and a 5 MiB body survive capture and replay byte for
byte, in their order."""

from __future__ import annotations

import os

import pytest

from console.models import DeadLetter
from tests.redis_streams.flow import capture, discovered, replay

pytestmark = [pytest.mark.redis, pytest.mark.django_db]


def test_binary_fields_and_a_large_body_come_back_unchanged(redis_client, poisoned, redis_broker, operator):
    body = os.urandom(5 * 1024 * 1024)
    fields = {b"trace": b"\xff\xfe\x00<script>", b"body": body, b"\xc3\x28name": b"latin-1 \xe9", b"text": "żółw",
              b"nul\x00name": b"nul\x00value"}
    redis_client.xadd(poisoned.stream, fields)
    poisoned.fail(times=4)
    place = discovered(redis_broker, operator, poisoned.group, scope=poisoned.stream)

    with redis_broker.adapter() as adapter:
        (peeked,) = adapter.peek(place.ref, limit=5)
    assert peeked.body == body and peeked.headers["trace"] == b"\xff\xfe\x00<script>"

    assert capture(place, operator).done == 1
    letter = DeadLetter.objects.get()
    assert bytes(letter.body) == body and letter.body_size == len(body)
    assert letter.headers["text"] == "żółw"

    assert replay(operator, [letter.id]).done == 1
    (entry,) = poisoned.read_new()
    copy = dict(entry[1])
    assert copy.pop(b"x-dlo-replay-id") == DeadLetter.objects.get().replay_id.encode()
    assert list(copy.items()) == [(k, v.encode() if isinstance(v, str) else v) for k, v in fields.items()]


def test_an_entry_without_a_body_field_keeps_all_its_fields_as_headers(redis_client, poisoned, redis_broker, operator):
    redis_client.xadd(poisoned.stream, {"event": "order.created", "order_id": "7", "at": "2026-11-22"})
    poisoned.fail(times=4)
    capture(discovered(redis_broker, operator, poisoned.group, scope=poisoned.stream), operator)
    letter = DeadLetter.objects.get()
    assert bytes(letter.body) == b""
    assert letter.headers == {"event": "order.created", "order_id": "7", "at": "2026-11-22"}

    replay(operator, [letter.id])
    (entry,) = poisoned.read_new()
    assert list(entry[1].items())[:3] == [(b"event", b"order.created"), (b"order_id", b"7"), (b"at", b"2026-11-22")]
    assert list(entry[1]) == [b"event", b"order_id", b"at", b"x-dlo-replay-id"]
