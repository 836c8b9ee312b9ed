"""Issue 28, the scope walk: a user limited to place A, an operator and an admin, walks every
URL of the console (pages, htmx partials, API lists and details) while a failure group spans A
and B and every kind of object exists for B: a rule over B and one over every place, a note
about B's letters, a subscription to B and a delivery about it, B's origin with its breaker
open, a quarantined letter, a job, a user limited to B. Every page and answer about A names nothing of B (no name,
text or rule of B's), and every URL naming one of B's objects answers 403 or 404, read or write.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from django.utils import timezone

from console.access.roles import ADMIN, VIEWER, set_role
from console.jobs.door.requests import request_job
from console.models import DeadLetter, Origin, RoleScope
from console.services.channels import do_add_channel, do_subscribe
from console.services.group_work import do_add_note
from console.services.objectives import do_set_objective
from console.services.redaction import do_set_redaction_rule
from console.services.rules import do_create_rule
from console.services.saved_views import do_save_view
from tests.access.conftest import B_SECRETS, shows_nothing_of_b
from tests.access.test_every_url_by_role import body_text, every_url, filled
from tests.web.factory import store_letter, uploaded_mapping, uploaded_schema

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

#: URL keywords whose objects a scope limits (rules too: a rule over B answers 404 to A's users).
SCOPED = ("broker_id", "place_id", "letter_id", "job_id", "origin_id", "fingerprint", "rule_id")


@pytest.fixture
def world(places_a_and_b, people, django_user_model):
    a, b, ada = places_a_and_b.a, places_a_and_b.b, people["admin"]
    adam = django_user_model.objects.create_user("adam")
    set_role(adam, ADMIN)
    RoleScope.objects.create(user=adam, place=a)
    bea = django_user_model.objects.create_user("bea")  # a viewer limited to B: her limits name B
    set_role(bea, VIEWER)
    RoleScope.objects.create(user=bea, place=b)
    span_a = store_letter(a, b'{"order": 9}', origin="orders", exception_type="SpanTimeout",
                          exception_message="upstream slow")
    store_letter(b, b'{"diff": "card-4111-in-the-diff"}', origin="orders", exception_type="SpanTimeout",
                 exception_message="upstream slow", headers={"x-ledger": "billing"})
    do_add_note(span_a.fingerprint, actor=ada, text="ledger 991 out of balance")
    a_rule = do_create_rule(actor=ada, name="orders-hold", enabled=True, action={"kind": "hold"},
                            scope={"place": a.pk})
    b_rule = do_create_rule(actor=ada, name="billing-hold", enabled=True, action={"kind": "hold"},
                            scope={"place": b.pk})
    do_create_rule(actor=ada, name="billing-everywhere", action={"kind": "hold"})
    channel = do_add_channel(actor=ada, name="ops", kind="webhook", target="http://127.0.0.1:9/hook")
    do_subscribe(actor=ada, channel=channel, events=["group.new", "letter.quarantined"], user=ada, place=b)
    store_letter(b, b'{"ledger": 993}', origin="billing", exception_type="BillingCrash")  # told: a delivery
    DeadLetter.objects.filter(pk=places_a_and_b.b_letter.pk).update(
        quarantined_at=timezone.now(), quarantine_reason="billing came back 3 times")
    Origin.objects.filter(name="billing").update(breaker_opened_at=timezone.now(), breaker_reason="billing broke")
    a_job = request_job("mark_failed", actor=ada, reason="orders cleanup", ids=[places_a_and_b.a_letter.pk])
    b_job = request_job("mark_failed", actor=ada, reason="billing cleanup", ids=[places_a_and_b.b_letter.pk])
    redaction = do_set_redaction_rule(actor="tests", kind="header", pattern="authorization")
    common = {"broker_id": a.broker_id, "redaction_rule_id": redaction.pk, "user_id": places_a_and_b.otto.pk,
              "channel_id": channel.pk, "body_schema_id": uploaded_schema().pk,
              # A view of B's place, shared with everyone: a user limited to A opens it and finds none of B.
              "view_id": do_save_view(actor=ada, name="the other place", filter={"place": b.pk},
                                      sharing="everyone").pk,
              "objective_id": do_set_objective(actor=ada, name="billing an hour", kind="oldest", seconds=3600,
                                               place=b).pk,
              "body_mapping_id": uploaded_mapping().pk}
    inside = {**common, "place_id": a.pk, "letter_id": places_a_and_b.a_letter.pk, "job_id": a_job.pk,
              "rule_id": a_rule.pk, "origin_id": Origin.objects.get(name="orders").pk,
              "fingerprint": span_a.fingerprint}
    outside = {**common, "place_id": b.pk, "letter_id": places_a_and_b.b_letter.pk, "job_id": b_job.pk,
               "rule_id": b_rule.pk, "origin_id": Origin.objects.get(name="billing").pk,
               "fingerprint": places_a_and_b.b_letter.fingerprint}
    return SimpleNamespace(inside=inside, outside=outside, walkers=[places_a_and_b.otto, adam], b_place=b.pk)


def test_a_user_limited_to_a_reads_nothing_of_b_anywhere(world, signed_in_as):
    walked, shown = 0, []
    for walker in world.walkers:
        client = signed_in_as(walker)
        for _name, route in every_url():
            url = filled(route, world.inside)
            response = client.get(url)
            assert response.status_code < 500, (walker.username, url, response.status_code)
            raw = body_text(response)
            if found := [secret for secret in B_SECRETS if secret.lower() in raw.lower()]:
                shown.append((walker.username, url, found))
            if response.get("Content-Type") == "application/json" and names_place(json.loads(raw), world.b_place):
                shown.append((walker.username, url, ["B's place id"]))
            walked += 1
    assert not shown, f"place B shows through: {shown}"
    assert walked > 100


def test_every_url_naming_an_object_of_b_answers_403_or_404(world, signed_in_as):
    """Read or write, with a body or without: 403 or 404 (405 where the URL takes no such
    method, before anything is looked up), never an answer about B."""
    asked, wrong = 0, []
    for walker in world.walkers:
        client = signed_in_as(walker)
        for name, route in every_url():
            if name.startswith("redaction"):
                # Its <rule_id> is a redaction rule's, which no place scopes: the number filled in
                # is B's handling rule, and may be any redaction rule's (the ids of two tables
                # meet when a worker's database has made as many of each).
                continue
            if not any(f"<int:{key}>" in route or f"<str:{key}>" in route for key in SCOPED if key != "broker_id"):
                continue
            url = filled(route, world.outside)
            for method in ("get", "post", "patch", "put", "delete"):
                for body in ({}, WRITE_BODY):
                    response = getattr(client, method)(url, body, content_type="application/json")
                    if response.status_code not in (403, 404, 405):
                        wrong.append((walker.username, method, url, response.status_code))
                    elif response.status_code != 405:
                        shows_nothing_of_b(body_text(response))
                    asked += 1
    assert not wrong, wrong
    assert asked > 100


def names_place(answer, place_id: int) -> bool:
    """Whether an API answer gives ``place_id`` as a place anywhere (``place``, ``place_id``, ``places``)."""
    if isinstance(answer, list):
        return any(names_place(item, place_id) for item in answer)
    if not isinstance(answer, dict):
        return False
    for key, value in answer.items():
        if key in ("place", "place_id") and value == place_id:
            return True
        if key == "places" and isinstance(value, list) and place_id in value:
            return True
        if names_place(value, place_id):
            return True
    return False


#: A body every write would take: a reason, a note, a status...
WRITE_BODY = {"reason": "walk", "text": "a note", "status": "ignored", "events": ["group.new"], "channel": 1,
              "kind": "hold", "name": "walked", "action": {"kind": "hold"}}


#: Lists and the key of each row's id there: B's object must be absent, A's present.
LISTS = {"/api/letters/?state=any": "letter_id", "/api/jobs/": "job_id", "/api/rules/": "rule_id",
         "/api/origins/": "origin_id"}


def _rows(answer) -> list[dict]:
    return answer["results"] if isinstance(answer, dict) and "results" in answer else answer


def test_ids_and_counts_a_user_limited_to_a_reads_are_a_s_alone(world, signed_in_as):
    """Ids and counts, not only names and texts: B's letter, job, rule and origin are in no list
    answer (A's are), and the group spanning A and B counts A's letter alone."""
    span = world.inside["fingerprint"]
    for walker in world.walkers:
        client = signed_in_as(walker)
        for url, key in LISTS.items():
            ids = {row["id"] for row in _rows(client.get(url).json())}
            assert world.outside[key] not in ids and world.inside[key] in ids, (walker.username, url, ids)
        groups = {row["fingerprint"]: row for row in client.get("/api/groups/?state=any").json()}
        assert groups[span]["count"] == 1 and groups[span]["places"] == [world.inside["place_id"]]
        assert client.get(f"/api/groups/{span}/").json()["count"] == 1
