"""Browsing letters: filters, keyset pages that return every letter once, and a letter in full
with its body exactly as captured, however hostile."""

from __future__ import annotations

import base64
import json

import pytest

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from tests.api.helpers import dead_message

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert(1)</script>"


def ids_of(response) -> list[int]:
    assert response.status_code == 200, response.content
    return [letter["id"] for letter in response.json()["results"]]


def test_filters_by_origin_state_reason_header_and_body_text(api, capture, operator):
    orders = capture([
        dead_message("order 1 for acme", headers={"tenant": "acme"}),
        dead_message("order 2 needle-in-body", headers={"tenant": "globex"}),
        dead_message("order 3", reason="expired"),
    ])
    invoices = capture([dead_message("invoice 1", origin="invoices")], origin="invoices")
    run_job(request_job("mark_failed", actor=operator, reason="won't fix", ids=[orders[2]]).pk)

    assert ids_of(api.get("/api/letters/")) == orders + invoices
    assert ids_of(api.get("/api/letters/", {"origin": "invoices"})) == invoices
    assert ids_of(api.get("/api/letters/", {"state": "failed"})) == [orders[2]]
    assert ids_of(api.get("/api/letters/", {"state": "held", "origin": "orders"})) == orders[:2]
    assert ids_of(api.get("/api/letters/", {"reason": "expired"})) == [orders[2]]
    assert ids_of(api.get("/api/letters/", {"header": "tenant"})) == orders[:2]
    assert ids_of(api.get("/api/letters/", {"header": "tenant", "header_value": "acme"})) == [orders[0]]
    assert ids_of(api.get("/api/letters/", {"q": "needle-in-body"})) == [orders[1]]


def test_body_text_is_found_byte_for_byte_in_any_body(api, capture):
    # The search narrows through a trigram index on the body as escaped text (backslashes
    # doubled, NUL and bytes over 0x7F as \nnn); what it finds must still be exactly the
    # bodies holding the text's UTF-8 bytes.
    plain, accented, backslashed, binary, percent = capture([
        dead_message("no match here"),
        dead_message("Zoë ordered a crème brûlée"),
        dead_message(b'{"path": "C:\\orders\\2026"}'),
        dead_message(b"\x00\x80\xff binary \x00"),
        dead_message("100% of 5_000"),
    ])

    def found(text: str) -> list[int]:
        return ids_of(api.get("/api/letters/", {"q": text}))

    assert found("crème brûlée") == [accented]
    assert found("Zoë") == [accented]
    assert found("\\orders\\") == [backslashed]
    assert found(":\\") == [backslashed]
    assert found("binary") == [binary]
    # "\200" is how the escaped text writes the byte 0x80; only the body's own bytes count.
    assert found("200") == []
    assert found("\\200") == []
    assert found("% of 5_") == [percent]
    assert found("%") == [percent]
    assert found("_") == [percent]
    assert found("ë") == [accented]
    assert found("no match") == [plain]


def test_a_filter_it_cannot_read_is_refused_with_the_reason(api, capture):
    capture([dead_message("x")])
    response = api.get("/api/letters/", {"since": "last tuesday"})
    assert response.status_code == 400
    assert "since" in response.json()["detail"]
    assert api.get("/api/letters/", {"header_value": "acme"}).status_code == 400
    assert api.get("/api/letters/", {"cursor": "abc"}).status_code == 400


def test_keyset_pages_return_every_letter_exactly_once(api, capture):
    every = capture([dead_message(f"letter {i}") for i in range(23)])
    seen, pages = [], 0
    url = "/api/letters/?page_size=5"
    while url:
        response = api.get(url)
        seen += ids_of(response)
        pages += 1
        url = response.json()["next"]
        if pages == 2:  # letters arriving while someone pages come at the end, not in the middle
            every += capture([dead_message("late arrival")])
    assert seen == every
    assert pages == 5


def test_the_list_shows_size_content_type_and_a_preview_but_not_the_body(api, capture):
    (letter_id,) = capture([dead_message("x" * 5000, content_type="text/plain")])
    (item,) = api.get("/api/letters/").json()["results"]
    assert item["id"] == letter_id
    assert (item["body_size"], item["content_type"]) == (5000, "text/plain")
    assert item["preview"] == "x" * 200
    assert "body" not in item
    assert (item["origin_queue"], item["reason"], item["state"]) == ("orders", "rejected", "held")


def test_a_text_body_comes_back_as_text_and_a_binary_body_as_exact_base64(api, capture):
    binary = bytes(range(256)) + b"\xff\xfe\x00"
    text_id, binary_id = capture([
        dead_message("Grüße, 注文 #42"),
        dead_message(binary, headers={"trace": b"\x00\xffraw"}),
    ])
    text = api.get(f"/api/letters/{text_id}/").json()
    assert text["body"] == {"encoding": "text", "text": "Grüße, 注文 #42"}
    assert text["body_size"] == len("Grüße, 注文 #42".encode())

    raw = api.get(f"/api/letters/{binary_id}/").json()
    assert raw["body"]["encoding"] == "base64"
    assert base64.b64decode(raw["body"]["base64"]) == binary
    assert raw["headers"]["trace"] == {"$bytes": base64.b64encode(b"\x00\xffraw").decode()}


def test_hostile_body_and_headers_come_back_as_plain_json_strings(api, capture):
    (letter_id,) = capture([dead_message(SCRIPT, headers={SCRIPT: SCRIPT, "quote": '"}]}\\'})])
    response = api.get(f"/api/letters/{letter_id}/")
    assert response["Content-Type"] == "application/json"
    letter = json.loads(response.content)
    assert letter["body"] == {"encoding": "text", "text": SCRIPT}
    assert letter["headers"][SCRIPT] == SCRIPT
    assert letter["headers"]["quote"] == '"}]}\\'
    (item,) = json.loads(api.get("/api/letters/").content)["results"]
    assert item["preview"] == SCRIPT


def test_the_detail_shows_lineage_replay_id_and_the_letters_audit_trail(api, capture, memory_broker, operator):
    fake, _ = memory_broker
    (first,) = capture([dead_message("retry me")])
    run_job(request_job("replay", actor=operator, reason="bug fixed", ids=[first]).pk)
    fake.queue("orders.dlq").append(fake.queue("orders").popleft())  # it dies again
    (returned,) = capture([])

    old = api.get(f"/api/letters/{first}/").json()
    new = api.get(f"/api/letters/{returned}/").json()
    assert old["state"] == "replayed" and old["replay_id"]
    assert old["lineage"] == {"parent": None, "returns": [returned]}
    assert new["lineage"] == {"parent": first, "returns": []}
    assert new["headers"]["x-dlo-replay-id"] == old["replay_id"]
    trail = [(event["action"], event["actor"]) for event in old["audit"]]
    assert trail == [("capture", "olga"), ("job.requested", "olga"), ("replay", "olga")]
    assert all(first in event["letter_ids"] for event in old["audit"])


def test_an_unknown_letter_is_404(api):
    assert api.get("/api/letters/999999999/").status_code == 404
