"""A letter's page: envelope, decoded x-death, body forms and size cap, download, lineage, audit."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.urls import reverse

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import DeadLetter
from console.web.display import BODY_PAGE_LIMIT
from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db

X_DEATH = [
    {"count": 3, "reason": "rejected", "queue": "orders", "time": datetime(2026, 3, 1, 12, 0, 5, tzinfo=UTC),
     "exchange": "shop", "routing-keys": ["order.created", "order.eu"]},
    {"count": 1, "reason": "expired", "queue": "orders.retry",
     "time": int(datetime(2026, 3, 1, 11, 0, tzinfo=UTC).timestamp()),  # as seconds, undecoded
     "exchange": "", "routing-keys": [b"orders.retry"], "original-expiration": b"60000"},
]


def _page(client, letter) -> str:
    return client.get(reverse("letter", args=[letter.pk])).content.decode()


def test_x_death_is_decoded_into_its_own_table(signed_in, place):
    letter = store_letter(place, headers={"x-death": X_DEATH, "x-first-death-queue": "orders"})
    html = _page(signed_in, letter)
    table = html.split('id="x-death"')[1].split("</table>")[0]
    assert "<td>orders</td><td>rejected</td><td class=\"num\">3</td>" in table.replace("\n", "").replace("  ", "")
    assert "order.created, order.eu" in table
    assert "2026-03-01T12:00:05+00:00" in table
    assert "orders.retry" in table and "60000" in table and "2026-03-01T11:00:00+00:00" in table


def test_x_death_as_the_rabbitmq_adapter_reads_it(signed_in, place):
    from console.brokers.rabbitmq.xdeath import envelope_from_headers

    headers = {"x-death": X_DEATH, "x-first-death-queue": b"orders.retry"}
    letter = store_letter(place, headers=headers, envelope=envelope_from_headers(headers))
    html = _page(signed_in, letter)
    table = html.split('id="x-death"')[1].split("</table>")[0]
    assert table.count("<tr>") == 3  # head + two deaths, newest first
    assert table.index("rejected") < table.index("expired")
    envelope = html.split('id="envelope"')[1].split("</dl>")[0]
    assert "<dt>Origin queue</dt><dd>orders</dd>" in envelope and "<dt>Origin exchange</dt><dd>shop</dd>" in envelope
    assert "<dt>Death count</dt><dd>3</dd>" in envelope and "<dt>First failure</dt><dd>2026-03-01 11:00:00" in envelope


def test_x_death_from_the_envelope_details_wins(signed_in, place):
    letter = store_letter(place, details={"x_death": [{"queue": "from-details", "reason": "maxlen", "count": 1}]},
                          headers={"x-death": X_DEATH})
    table = _page(signed_in, letter).split('id="x-death"')[1].split("</table>")[0]
    assert "from-details" in table and "maxlen" in table and "shop" not in table


def test_envelope_headers_and_properties_are_shown(signed_in, place):
    letter = store_letter(place, headers={"attempt": 4, "raw": b"\xff\x00", "flag": True},
                          properties={"message_id": "m-1", "priority": 5}, exception_type="TimeoutError",
                          exception_message="gave up after 30s", death_count=4)
    html = _page(signed_in, letter)
    assert "<dd>orders</dd>" in html and "<dd>rejected</dd>" in html and "<dd>4</dd>" in html
    assert "TimeoutError" in html and "gave up after 30s" in html
    assert '<code class="value">ff 00</code>' in html  # non-UTF-8 header bytes as hex
    assert '<code class="value">true</code>' in html and '<code class="value">m-1</code>' in html


@pytest.mark.parametrize(
    "body, kind, shown",
    [
        (b'{"order":{"id":7}}', "json", '{\n  &quot;order&quot;: {\n    &quot;id&quot;: 7\n  }\n}'),
        ("Grüße, order 7".encode(), "text", "Grüße, order 7"),
        (b"\x00\xff\xfeorder", "hex", "00000000  00 ff fe 6f 72 64 65 72"),
    ],
)
def test_body_is_shown_as_json_text_or_hex(signed_in, place, body, kind, shown):
    html = _page(signed_in, store_letter(place, body))
    assert f'<pre class="body body-{kind}">' in html and shown in html


def test_a_large_body_is_cut_in_the_page_and_whole_in_the_download(signed_in, place):
    body = b"a" * (BODY_PAGE_LIMIT + 10_000) + b"TAIL"
    letter = store_letter(place, body)
    html = _page(signed_in, letter)
    assert "TAIL" not in html and "Showing the first 256.0" in html and "download the body" in html
    download = signed_in.get(reverse("letter-body", args=[letter.pk]))
    assert download.content == body


def test_body_download_is_the_exact_bytes_as_an_attachment(signed_in, place):
    body = bytes(range(256)) + b"<script>alert(1)</script>"
    letter = store_letter(place, body)
    response = signed_in.get(reverse("letter-body", args=[letter.pk]))
    assert response.content == body
    assert response["Content-Type"] == "application/octet-stream"
    assert response["Content-Disposition"] == f'attachment; filename="letter-{letter.pk}.bin"'
    assert response["X-Content-Type-Options"] == "nosniff"


def test_lineage_links_parent_and_returns(signed_in, place):
    parent = store_letter(place, b"first try")
    child = store_letter(place, b"died again")
    DeadLetter.objects.filter(pk=child.pk).update(parent=parent)
    assert f'href="/letters/{child.pk}/">letter {child.pk}</a>' in _page(signed_in, parent)
    assert f'href="/letters/{parent.pk}/">letter {parent.pk}</a>' in _page(signed_in, child)


def test_the_letters_audit_events_are_listed(signed_in, place, operator):
    letter = store_letter(place)
    other = store_letter(place)
    run_job(request_job("mark_failed", actor=operator, reason="cannot be fixed", ids=[letter.pk]).pk)
    history = _page(signed_in, letter).split('id="history"')[1]
    assert "cannot be fixed" in history and "mark_failed" in history and "capture" in history
    assert "cannot be fixed" not in _page(signed_in, other).split('id="history"')[1]


@pytest.mark.role("admin")  # purging is the admin's
def test_a_purged_letter_says_its_body_was_erased(signed_in, place, operator):
    letter = store_letter(place, b"secret")
    run_job(request_job("purge", actor=operator, reason="gdpr", ids=[letter.pk]).pk)
    html = _page(signed_in, letter)
    assert "The body was erased" in html and "Download body" not in html
