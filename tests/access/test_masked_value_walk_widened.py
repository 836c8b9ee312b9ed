"""Issue 28, "what it must show": the masked-value walk, widened. A card number a redaction rule
masks is planted in every field a person can write through the API (a group's notes and tags,
rule names, matches and forward targets, reasons and tickets, channel names and targets, broker
names, redaction rules' notes) and in letters' headers, bodies and exception fields; then every
URL (pages, htmx partials, API lists and details, exports) is walked as a viewer: the value
appears nowhere, plain, JSON-escaped or base64. An operator sees the planted values."""

from __future__ import annotations

import json

import pytest

from console.models import Origin
from console.services.redaction import do_set_redaction_rule
from tests.access.masked_value import CARD, CARD_RULE, leaks
from tests.access.test_every_url_by_role import every_url, filled
from tests.web.factory import memory_place, store_letter, uploaded_mapping, uploaded_schema

pytestmark = pytest.mark.django_db


def _post(client, url: str, data: dict, method: str = "post"):
    response = getattr(client, method)(url, json.dumps(data), content_type="application/json")
    assert response.status_code < 300, (url, response.status_code, response.content[:300])
    return response.json() if response.content else None


@pytest.fixture
def planted(memory_broker, people, signed_in_as) -> dict:
    """Everything a person can write holding CARD, written through the API; letters holding it."""
    do_set_redaction_rule(actor="tests", kind=CARD_RULE[0], pattern=CARD_RULE[1])
    fake, broker = memory_broker
    place = memory_place(memory_broker)
    letters = [
        store_letter(place, json.dumps({"card": CARD}).encode(), headers={"x-card": f"card {CARD}"},
                     exception_type="com.shop.Declined", exception_message=f"card {CARD} declined",
                     details={"consumer": f"pay-{CARD}"}),
        store_letter(place, f"paid with {CARD}".encode(), headers={"x-bytes": CARD.encode()}),
    ]
    fingerprint = letters[0].fingerprint
    operator = signed_in_as(people["operator"])
    _post(operator, f"/api/groups/{fingerprint}/notes/", {"text": f"customer card {CARD}"})
    _post(operator, f"/api/groups/{fingerprint}/", {"tags": [f"card-{CARD}"], "reason": f"tagged {CARD}"}, "patch")
    rule = _post(operator, "/api/rules/", {"name": f"card {CARD}", "match": {"exception_message": f"card {CARD}"},
                                           "action": {"kind": "hold"}, "reason": f"rule for {CARD}"})
    fake.queue(f"parked-{CARD}")
    _post(operator, "/api/rules/", {"name": "forward cards", "action": {"kind": "forward", "target": f"parked-{CARD}"},
                                    "reason": "parking"})
    job = _post(operator, "/api/jobs/", {"action": "mark_failed", "letters": [letters[1].pk],
                                         "reason": f"card {CARD} given up", "ticket": f"T-{CARD}"})
    admin = signed_in_as(people["admin"])
    channel = _post(admin, "/api/notifications/channels/", {"name": f"ops {CARD}", "kind": "webhook",
                                                            "target": f"http://127.0.0.1:9/hooks/{CARD}"})
    redaction = _post(admin, "/api/redaction-rules/", {"kind": "header", "pattern": "x-secret",
                                                       "note": f"hides card {CARD}"})
    other = _post(admin, "/api/brokers/", {"name": f"card-{CARD}", "kind": "memory", "url": "memory://test"})
    return {"broker_id": other["id"], "place_id": place.pk, "letter_id": letters[0].pk, "job_id": job["id"],
            "rule_id": rule["id"], "redaction_rule_id": redaction["id"], "user_id": people["operator"].pk,
            "origin_id": Origin.objects.filter(broker=broker).first().pk, "fingerprint": fingerprint,
            "channel_id": channel["id"], "letters": [letter.pk for letter in letters],
            "objective_id": _post(admin, "/api/objectives/", {"name": f"card {CARD}", "place": place.pk,
                                                              "kind": "oldest", "seconds": 3600})["id"],
            "view_id": _post(admin, "/api/views/", {"name": f"card {CARD}", "description": f"about {CARD}",
                                                    "filter": {"header_value": CARD, "header": "x-card"},
                                                    "sharing": "everyone"})["id"],
            "body_schema_id": uploaded_schema().pk, "body_mapping_id": uploaded_mapping().pk}


def _urls(planted: dict) -> list[str]:
    urls = []
    for _, route in every_url():
        for letter in planted["letters"]:
            urls.append(filled(route, {**planted, "letter_id": letter}))
    urls += ["/groups/?state=any", "/api/groups/?state=any", "/api/letters/?state=any", "/letters/?state=any"]
    return list(dict.fromkeys(urls))


def _answer(response) -> str:
    content = b"".join(response.streaming_content) if response.streaming else response.content
    return content.decode("utf-8", "replace") + "".join(f"{k}: {v}\n" for k, v in response.items())


def test_no_answer_to_a_viewer_holds_a_value_a_person_or_a_message_wrote(planted, people, signed_in_as):
    viewer = signed_in_as(people["viewer"])
    leaked, read = {}, 0
    for url in _urls(planted):
        for extra in ({}, {"HTTP_HX_REQUEST": "true"}):
            response = viewer.get(url, **extra)
            assert response.status_code < 500, (url, response.status_code)
            if found := leaks(_answer(response)):
                leaked[(url, bool(extra))] = found
            read += response.status_code == 200
    assert leaked == {}
    assert read > 40


def test_an_operator_sees_what_was_planted(planted, people, signed_in_as):
    operator = signed_in_as(people["operator"])
    for url in (f"/groups/{planted['fingerprint']}/", f"/api/groups/{planted['fingerprint']}/", "/rules/",
                "/api/rules/", f"/jobs/{planted['job_id']}/", f"/api/letters/{planted['letter_id']}/", "/audit/"):
        assert CARD in _answer(operator.get(url)), url
