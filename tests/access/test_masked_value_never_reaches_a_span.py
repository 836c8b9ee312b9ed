"""A value a redaction rule masks never reaches the console's own spans (issue 34, point 4):
the console served by Gunicorn from console/wsgi.py, with the standard
OTEL_EXPORTER_OTLP_ENDPOINT pointing at a real OTLP/HTTP endpoint on loopback
(tests.otlp_receiver), answers a viewer who filters letters by the masked value, reads the
letter, and a signed-out visitor who asks a page with it in the query string. The Django and
psycopg instrumentations' spans arrive (a request's span with its statements under it) and no
byte of them holds the value in any form (tests.access.masked_value.leaks).
"""

from __future__ import annotations

import httpx
import pytest
from rest_framework.authtoken.models import Token

from console.access.roles import VIEWER
from console.brokers.memory.adapter import Message
from console.services.brokers import do_discover
from console.services.custody import store_captured
from console.services.redaction import do_set_redaction_rule
from tests.access.masked_value import CARD, CARD_RULE, leaks
from tests.web_process import serving

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def traced_web(receiver, tmp_path):
    """``gunicorn console.wsgi`` (one worker) with its telemetry on; its base URL."""
    with serving(tmp_path / "gunicorn.log", OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint,
                 OTEL_BSP_SCHEDULE_DELAY="100", OTEL_SERVICE_NAME="dlo-web-under-test") as base:
        yield base


def test_a_masked_value_in_a_filter_or_a_header_reaches_no_span(memory_broker, people, receiver, traced_web):
    fake, broker = memory_broker
    fake.queue("orders")
    fake.queue("orders.dlq").append(Message(b'{"order": 1}', {"x-origin-queue": "orders", "x-card": CARD}))
    (place,) = do_discover(broker, actor="tests")
    with broker.adapter().open_capture(place.ref, prefetch=10) as session:
        batch = session.next_batch(10, 0)
        (letter_id,) = store_captured(place, batch, job=None, actor="tests").ids
        session.ack(batch)
    do_set_redaction_rule(actor="tests", kind=CARD_RULE[0], pattern=CARD_RULE[1])
    key = Token.objects.create(user=people[VIEWER]).key

    viewer = httpx.Client(base_url=traced_web, headers={"Authorization": f"Token {key}"}, timeout=30)
    found = viewer.get("/api/letters/", params={"header": "x-card", "header_value": CARD})
    assert found.status_code == 200 and leaks(found.text) == []  # (a viewer's filter finds no masked value)
    letter = viewer.get(f"/api/letters/{letter_id}/")
    assert letter.status_code == 200 and leaks(letter.text) == []
    signed_out = httpx.get(f"{traced_web}/letters/", params={"header": "x-card", "header_value": CARD}, timeout=30)
    assert signed_out.status_code in (302, 401, 403)

    wanted = {"/api/letters/", f"/api/letters/{letter_id}/", "/letters/"}

    def request_spans(spans):
        served = [s for s in spans if s.resource.get("dlo.process") == "web" and s.attributes.get("http.method")]
        statements = [s for s in spans if any(s.parent_span_id == r.span_id for r in served)
                      and s.attributes.get("db.system") in ("postgresql", "postgres")]
        seen = {str(s.attributes.get("http.target")).split("?")[0] for s in served}
        return (served, statements) if wanted <= seen and statements else None

    served, statements = receiver.wait_for(request_spans, "the three requests' spans, with statements")
    assert {s.attributes.get("http.route") for s in served} >= {"api/letters/", "api/letters/<int:letter_id>/"}
    assert leaks(receiver.everything()) == [], "a masked value reached a span"
    for span in served:
        for key_ in ("http.url", "http.target", "url.full"):
            assert "?" not in str(span.attributes.get(key_, "")), f"{span.name}: a query string in {key_}"
