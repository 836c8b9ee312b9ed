"""For a viewer, no answer of any URL (pages, htmx partials, API, exports, downloads) holds a
value that a redaction rule masks, wherever the value sits: JSON bodies (plain and escaped),
text bodies, headers kept as text, bytes or numbers, framework exception headers (Spring's
``x-exception-*``, Spring Kafka's ``kafka_dlt-*``), audit events, jobs (reason, filter, log,
error), approvals and failure groups (live and history). Each answer is searched for the value
in every form a leak could take: as it is, JSON-escaped, base64 of its bytes, and the escaped
form a JSON body was written in."""

from __future__ import annotations

import base64
import json

import pytest
from django.utils import timezone

from console.jobs.door.requests import request_job
from console.models import BusyName, FailureGroupHistory, Job, Origin, OutcomeStat
from console.services.channels import do_add_channel
from console.services.objectives import do_set_objective
from console.services.redaction import do_set_redaction_rule
from console.services.saved_views import do_save_view
from tests.access.test_every_url_by_role import every_url, filled
from tests.web.factory import memory_place, store_letter, uploaded_mapping, uploaded_schema

pytestmark = [pytest.mark.django_db, pytest.mark.approvals]

CARD = "4111111111111111"
PAN = "5500000000000004"  # masked by the JSON path $..pan only
ESCAPED_CARD = "\\u0034\\u0031\\u0031\\u0031111111111111"  # decodes to CARD
LEAKS = {
    CARD, PAN, json.dumps(CARD)[1:-1], base64.b64encode(CARD.encode()).decode().rstrip("="),
    base64.b64encode(f"pan {CARD}".encode()).decode().rstrip("="), ESCAPED_CARD, ESCAPED_CARD.replace("\\", "\\\\"),
}


@pytest.fixture
def seeded(memory_broker, people):
    """Letters, audit events, jobs and groups holding CARD or PAN; the ids each URL is filled with."""
    for kind, pattern in (("regex", r"4111\d{12}"), ("json_path", "$..pan"), ("header", "authorization")):
        do_set_redaction_rule(actor="tests", kind=kind, pattern=pattern)
    fake, broker = memory_broker
    place = memory_place(memory_broker)
    letters = [
        store_letter(place, json.dumps({"card": CARD, "pan": PAN}).encode()),
        store_letter(place, ('{"card": "' + ESCAPED_CARD + '", "order": 7}').encode()),
        store_letter(place, f"paid with {CARD} today".encode()),
        store_letter(place, b"order 8", headers={
            "x-text": f"card {CARD}", "x-bytes": CARD.encode(), "x-more-bytes": f"pan {CARD}".encode(),
            "x-number": int(CARD), "x-json": json.dumps({"pan": PAN}), "Authorization": f"Bearer {CARD}"}),
        store_letter(place, b"order 9", headers={
            "x-exception-message": f"card {CARD} declined",
            "x-exception-stacktrace": f"com.shop.Declined: card {CARD}\n\tat com.shop.Pay(Pay.java:1)",
            "x-original-queue": "orders"}),
        store_letter(place, b"order 10", headers={
            "kafka_dlt-exception-message": f"card {CARD}", "kafka_dlt-exception-fqcn": "com.shop.Declined",
            "kafka_dlt-original-topic": "orders"}),
    ]
    edited = letters[3]
    request_job("edit_replay", letter=edited, body=b'{"pan": "' + PAN.encode() + b'"}',
                headers={**edited.headers, "x-added": f"card {CARD}"}, actor=people["operator"],
                reason=f"customer says {CARD} is right")
    job = request_job("purge", actor=people["admin"], reason=f"purge card {CARD}", ticket=CARD,
                      filter={"place": str(place.pk), "q": CARD})  # a purge waits for approval
    assert Job.objects.get(pk=job.pk).status == Job.Status.AWAITING_APPROVAL
    logged = request_job("mark_failed", actor=people["operator"], reason="stale", ids=[letters[2].pk])
    Job.objects.filter(pk=logged.pk).update(
        log=[{"at": timezone.now().isoformat(), "message": f"broker said: no such card {CARD}"}],
        error=f"refused {CARD}")
    now = timezone.now()
    FailureGroupHistory.objects.create(
        fingerprint="f" * 32, exception_type="com.shop.Declined", count=1, sample_message=f"card {CARD}",
        first_seen=now, last_seen=now, computed_at=now, consumers=[f"c-{CARD}"], hosts=["pay-1"])
    figures = dict(letters=1, resolved=0, replayed=0, failed=0, came_back=0, recurrences=0, computed_at=now)
    OutcomeStat.objects.create(kind="all", **figures)
    OutcomeStat.objects.create(kind="group", fingerprint="f" * 32, **figures)
    BusyName.objects.create(kind="consumer", name=f"c-{CARD}", letters=1, groups=1, computed_at=now)
    fake.queue("orders.dlq")
    rule = do_set_redaction_rule(actor="tests", kind="header", pattern="x-secret")
    return {"broker_id": broker.pk, "place_id": place.pk, "letter_id": [letter.pk for letter in letters],
            "job_id": [job.pk, logged.pk], "rule_id": rule.pk, "redaction_rule_id": rule.pk,
            "user_id": people["operator"].pk,
            "origin_id": Origin.objects.get(broker=broker, name="orders").pk,
            "fingerprint": letters[0].fingerprint,
            "channel_id": do_add_channel(actor="tests", name="ops", kind="webhook", target="http://127.0.0.1:9/hook").pk,
            "body_schema_id": uploaded_schema().pk, "body_mapping_id": uploaded_mapping().pk,
            "view_id": do_save_view(actor=people["operator"], name=f"card {CARD}", description=f"about {CARD}",
                                    filter={"origin": f"o-{CARD}"}, sharing="everyone").pk,
            "objective_id": do_set_objective(actor=people["operator"], name=f"card {CARD}", kind="oldest",
                                             seconds=3600, place=place).pk}


def _urls(seeded) -> list[str]:
    """Every route, once for each seeded letter and job it can name, plus filtered lists."""
    urls = []
    for _, route in every_url():
        for letter in seeded["letter_id"]:
            for job in seeded["job_id"]:
                urls.append(filled(route, {**seeded, "letter_id": letter, "job_id": job}))
    # Filtered lists, with needles a page may echo back (the viewer's own typing is no leak).
    place = seeded["place_id"]
    urls += [f"/api/letters/?place={place}&q={q}" for q in ("order", "card", "4111")]
    urls += [f"/places/{place}/?q={q}" for q in ("order", "card", "4111")]
    urls += [f"/places/{place}/?header=x-text&header_value=card", "/groups/?state=any",
             f"/places/{place}/groups/?state=any", "/jobs/?status=awaiting_approval", "/api/audit/?action=edit_replay"]
    return list(dict.fromkeys(urls))


def _answer(response) -> str:
    content = b"".join(response.streaming_content) if response.streaming else response.content
    return content.decode("utf-8", "replace") + "".join(f"{k}: {v}\n" for k, v in response.items())


def test_no_answer_to_a_viewer_holds_a_masked_value(seeded, people, signed_in_as):
    viewer = signed_in_as(people["viewer"])
    read = 0
    for url in _urls(seeded):
        for extra in ({}, {"HTTP_HX_REQUEST": "true"}):
            response = viewer.get(url, **extra)
            assert response.status_code < 500, (url, response.status_code)
            answer = _answer(response)
            assert [leak for leak in LEAKS if leak in answer] == [], (url, extra)
            read += response.status_code == 200
    assert read > 100


def test_the_seeded_values_are_there_for_an_operator(seeded, people, signed_in_as):
    """The check above proves something: the same URLs show the values to who may see them."""
    operator = signed_in_as(people["operator"])
    shown = "".join(_answer(operator.get(url)) for url in _urls(seeded) if "/export" not in url)
    assert CARD in shown and PAN in shown and ESCAPED_CARD in shown
    for url in ("/analytics/", "/api/analytics/", "/groups/history/", "/approvals/", f"/jobs/{seeded['job_id'][1]}/",
                "/audit/"):
        assert CARD in _answer(operator.get(url)), url
