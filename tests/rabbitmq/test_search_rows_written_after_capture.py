"""A capture leaves its letters' search rows for later (console.services.search_rows): the
letters are found by body text and by header value at once, before the rows are filled, and
exactly the same after; a text or a value no letter holds finds none."""

from __future__ import annotations

import pytest

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import DeadLetter, LetterSearch
from console.services.brokers import do_discover
from console.services.search_rows import fill_search_rows
from console.services.selection import filter_letters

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db]


def found(place, **wanted) -> list[str]:
    return sorted(filter_letters({"place": place.pk, **wanted}).values_list("message_id", flat=True))


def test_letters_are_found_before_and_after_their_search_rows_are_filled(kit, rabbit_broker, operator, settings):
    settings.DLO_BATCH_SIZE = 4
    dlq = kit.queue(kit.name("later") + ".dlq")
    for i in range(10):
        body = (b'{"sku": "gift wrap"}' if i % 3 == 0 else b'{"sku": "plain"}') + b"\x00\xff" * i
        kit.publish(dlq, body, message_id=f"m{i}", headers={"tenant": f"t{i % 2}"})
    (place,) = [p for p in do_discover(rabbit_broker, actor=operator) if p.name == dlq]

    job = request_job("capture", place=place, actor=operator, reason="capture")
    assert run_job(job.pk) == "succeeded"
    letters = DeadLetter.objects.filter(place=place)
    rows = LetterSearch.objects.filter(letter__in=letters)
    assert letters.count() == 10
    assert rows.filter(pending=True).count() == 10  # placeholders: nothing indexed yet

    wrapped, t1 = ["m0", "m3", "m6", "m9"], ["m1", "m3", "m5", "m7", "m9"]
    for when in ("before the fill", "after the fill"):
        assert found(place, q="gift wrap") == wrapped, when
        assert found(place, q='"sku": "plain"') == sorted(set(f"m{i}" for i in range(10)) - set(wrapped)), when
        assert found(place, header="tenant", header_value="t1") == t1, when
        assert found(place, q="no letter holds this") == [], when
        assert found(place, header="tenant", header_value="t9") == [], when
        if when == "before the fill":
            assert fill_search_rows(batch=3) == 10

    assert not rows.filter(pending=True).exists()
    row = rows.get(letter__message_id="m3")
    assert row.headers["tenant"] == "t1" and row.text.startswith('{"sku": "gift wrap"}') and not row.partial


def test_a_placeholder_whose_letter_is_gone_is_dropped(kit, rabbit_broker, operator):
    dlq = kit.queue(kit.name("gone") + ".dlq")
    kit.publish(dlq, b"soon gone", message_id="gone")
    (place,) = [p for p in do_discover(rabbit_broker, actor=operator) if p.name == dlq]
    assert run_job(request_job("capture", place=place, actor=operator, reason="capture").pk) == "succeeded"
    letter = DeadLetter.objects.get(place=place)
    DeadLetter.objects.filter(pk=letter.pk)._raw_delete(DeadLetter.objects.db)  # SQL, no cascade

    assert fill_search_rows() == 1
    assert not LetterSearch.objects.filter(letter_id=letter.pk).exists()
