"""A letter's trace id is shown, linked and found only where its reader can read it (issue 34):
a redaction rule on the header that carries it (by name, or a regular expression that changes
its value) hides it from a viewer on the letter page, the lists and the API, and the
``trace_id`` filter does not find the letter for them, so it cannot be probed; an operator
still sees and finds it. A user limited to place A finds nothing of place B by B's trace id."""

from __future__ import annotations

import json
import re

import pytest

from console.services.redaction import do_set_redaction_rule
from tests.access.conftest import shows_nothing_of_b
from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db

TRACE_A, SPAN_A = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
TRACE_B3, SPAN_B3 = "80f198ee56343ba864fe8b2a57d3eff7", "e457b5a2e4d86bd1"
TRACE_B, SPAN_B = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
LINK = "https://jaeger.example.com/trace/{trace_id}?uiFind={span_id}"


@pytest.fixture
def traced(places_a_and_b, settings):
    """In place A a letter with a W3C traceparent and one with a B3 header; in B one with a
    traceparent of another trace, failed the same way (one failure group across both places)."""
    settings.DLO_TRACE_URL = LINK
    a, b = places_a_and_b.a, places_a_and_b.b
    w3c = store_letter(a, b'{"order": 1}', headers={"traceparent": f"00-{TRACE_A}-{SPAN_A}-01"},
                       exception_type="OrderTimeout")
    b3 = store_letter(a, b'{"order": 2}', headers={"b3": f"{TRACE_B3}-{SPAN_B3}-1"}, exception_type="OrderTimeout")
    other = store_letter(b, b'{"ledger": 991}', headers={"traceparent": f"00-{TRACE_B}-{SPAN_B}-01"},
                         exception_type="OrderTimeout")
    assert w3c.fingerprint == b3.fingerprint == other.fingerprint
    return places_a_and_b, w3c, b3, other


def _api_ids(client, **params) -> list[int]:
    response = client.get("/api/letters/", params)
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()["results"]]


def _page_ids(client, path: str = "/letters/", **params) -> list[int]:
    page = client.get(path, params)
    assert page.status_code == 200
    return sorted({int(i) for i in re.findall(r'href="/letters/(\d+)/"', page.content.decode())})


def _link(trace_id: str, span_id: str) -> str:
    return LINK.format(trace_id=trace_id, span_id=span_id).replace("&", "&amp;")


def test_without_a_rule_a_viewer_sees_links_and_finds_the_trace(traced, people, signed_in_as):
    _, w3c, b3, _ = traced
    client = signed_in_as(people["viewer"])
    page = client.get(f"/letters/{w3c.pk}/").content.decode()
    assert _link(TRACE_A, SPAN_A) in page and SPAN_A in page
    assert client.get(f"/api/letters/{w3c.pk}/").json()["trace"] == {
        "trace_id": TRACE_A, "span_id": SPAN_A, "url": LINK.format(trace_id=TRACE_A, span_id=SPAN_A)}
    assert _api_ids(client, trace_id=TRACE_A) == [w3c.pk]
    assert _api_ids(client, trace_id=TRACE_B3.upper()) == [b3.pk]  # any case
    assert _page_ids(client, trace_id=TRACE_A) == [w3c.pk]
    assert _link(TRACE_B3, SPAN_B3) in client.get("/letters/").content.decode()  # the list's Trace column


@pytest.mark.parametrize("kind, pattern", [("header", "traceparent"), ("header", "trace*"),
                                           ("regex", r"[0-9a-f]{32}")])
def test_a_masked_trace_header_hides_the_trace_from_a_viewer(traced, people, signed_in_as, kind, pattern):
    _, w3c, b3, _ = traced
    do_set_redaction_rule(actor="tests", kind=kind, pattern=pattern)
    viewer = signed_in_as(people["viewer"])
    page = viewer.get(f"/letters/{w3c.pk}/").content.decode()
    assert TRACE_A not in page and "jaeger.example.com" not in page and 'id="trace"' not in page
    detail = viewer.get(f"/api/letters/{w3c.pk}/").json()
    assert detail["trace"] is None and TRACE_A not in str(detail)
    listed = viewer.get("/api/letters/").json()["results"]
    assert TRACE_A not in str(listed) and next(row for row in listed if row["id"] == w3c.pk)["trace"] is None
    assert TRACE_A not in viewer.get("/letters/").content.decode()
    # Not found by the id the mask hides: on the API, the Letters page and the place page.
    assert _api_ids(viewer, trace_id=TRACE_A) == []
    assert _page_ids(viewer, trace_id=TRACE_A) == []
    assert _page_ids(viewer, f"/places/{w3c.place_id}/", trace_id=TRACE_A) == []
    # A rule on traceparent leaves the B3 header's trace as it was; a regex on hex ids hides both.
    hides_b3 = kind == "regex"
    assert (_api_ids(viewer, trace_id=TRACE_B3) == []) == hides_b3
    # The operator sees content unmasked: everything as before.
    operator = signed_in_as(people["operator"])
    assert _link(TRACE_A, SPAN_A) in operator.get(f"/letters/{w3c.pk}/").content.decode()
    assert _api_ids(operator, trace_id=TRACE_A) == [w3c.pk]


def test_a_user_limited_to_one_place_finds_nothing_of_the_other_by_its_trace(traced, people, signed_in_as):
    places, w3c, _, other = traced
    otto = signed_in_as(places.otto)
    assert _api_ids(otto, trace_id=TRACE_B) == []
    assert _page_ids(otto, trace_id=TRACE_B) == []
    listed = otto.get("/letters/").content.decode()
    assert TRACE_B not in listed and TRACE_A[:8] in listed
    shows_nothing_of_b(listed)
    assert otto.get(f"/letters/{other.pk}/").status_code in (403, 404)
    assert otto.get(f"/api/letters/{other.pk}/").status_code in (403, 404)
    # The group counts the traces of the letters its reader sees: A's two for otto, three for all.
    group = otto.get(f"/groups/{w3c.fingerprint}/").content.decode()
    assert re.search(r'id="group-traces">They failed in 2 traces', group), group
    assert otto.get(f"/api/groups/{w3c.fingerprint}/").json()["traces"] == 2
    unlimited = signed_in_as(people["viewer"])
    assert "They failed in 3 traces" in unlimited.get(f"/groups/{w3c.fingerprint}/").content.decode()


def test_a_dramatiq_trace_in_the_body_is_hidden_where_the_body_is_masked(places_a_and_b, people, signed_in_as):
    body = json.dumps({"queue_name": "default", "actor_name": "charge", "args": [7], "kwargs": {},
                       "options": {"options": {"trace_context": {"traceparent": f"00-{TRACE_A}-{SPAN_A}-01"}}},
                       "message_id": "d1"}).encode()
    letter = store_letter(places_a_and_b.a, body)
    assert (letter.trace_id, letter.span_id) == (TRACE_A, SPAN_A)
    viewer = signed_in_as(people["viewer"])
    assert _api_ids(viewer, trace_id=TRACE_A) == [letter.pk]
    assert viewer.get("/api/letters/").json()["results"][-1]["trace"]["trace_id"] == TRACE_A

    do_set_redaction_rule(actor="tests", kind="json_path", pattern="$.options.options.trace_context")
    assert _api_ids(viewer, trace_id=TRACE_A) == []
    assert viewer.get("/api/letters/").json()["results"][-1]["trace"] is None
    assert TRACE_A not in viewer.get(f"/letters/{letter.pk}/").content.decode()
    assert _api_ids(signed_in_as(people["operator"]), trace_id=TRACE_A) == [letter.pk]
