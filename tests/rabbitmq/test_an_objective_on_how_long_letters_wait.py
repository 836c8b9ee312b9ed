"""Issue 51: an objective "no letter waits longer than 2 minutes" on a dead queue kept in custody
on the real RabbitMQ. As its letters wait, the objective goes at risk (past 80% of the time),
then breached, each told once to a real webhook receiver (naming its owner) and audited; a replay
of the letters brings it back (recovered, told once). ``dlo_objective_oldest_age_seconds``
follows. The clock is the evaluation's ``now``: two minutes are not waited for."""

from __future__ import annotations

import re
import time
from datetime import timedelta

import pytest
from rest_framework.test import APIClient

from console.models import AuditEvent, DeadLetter, DeadPlace, Delivery, Job, Objective
from console.notifications.delivery import deliver
from console.services.brokers import do_discover
from console.services.channels import do_add_channel, do_subscribe
from console.services.objectives import evaluate_objectives

pytestmark = [pytest.mark.keeper, pytest.mark.rabbitmq, pytest.mark.django_db(transaction=True)]

EVENTS = ["objective.at_risk", "objective.breached", "objective.recovered"]


def _oldest_metric(client: APIClient) -> float:
    scraped = client.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-me").content.decode()
    (value,) = re.findall(r'^dlo_objective_oldest_age_seconds\{[^}]*objective="two minutes"[^}]*\} (\S+)$',
                          scraped, re.MULTILINE)
    return float(value)


def test_an_objective_goes_at_risk_then_breached_then_recovers_after_a_replay(
        kit, rabbit_broker, operator, admin, keeper, rounds, http, settings, client):
    settings.DLO_METRICS_TOKEN = "scrape-me"
    dlq = kit.queue(kit.name("waits.dlq"))
    work = kit.queue(kit.name("waits"), {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
    (place,) = [p for p in do_discover(rabbit_broker, actor=operator) if p.name == dlq]
    api = APIClient()
    api.force_authenticate(operator)
    assert api.patch(f"/api/places/{place.pk}/", {"keep_in_custody": True, "reason": "watch it"},
                     format="json").status_code == 200
    keeper.start()
    kit.wait_for(lambda: Job.objects.filter(kind="keep", place=place, status="running").exists()
                 and kit.consumers(dlq) > 0, "the keeper to hold the place", seconds=60)
    for n in range(3):
        kit.publish(work, f"order {n}".encode())
    kit.reject(work, count=3)
    kit.wait_for(lambda: DeadLetter.objects.filter(place=place).count() == 3, "the letters in custody")
    do_subscribe(actor=admin, channel=do_add_channel(actor=admin, name="sre", kind="webhook", target=http.url),
                 events=EVENTS, user=operator)

    made = api.post("/api/objectives/", {"name": "two minutes", "place": place.pk, "kind": "oldest", "seconds": 120},
                    format="json")
    assert made.status_code == 201, made.content
    assert made.json()["state"] == "met" and made.json()["owner"] == "olga"
    first = DeadLetter.objects.filter(place=place).order_by("id").first().captured_at

    def judged_at(seconds: float) -> list[str]:
        return [event for _, event in evaluate_objectives(now=first + timedelta(seconds=seconds))]

    assert judged_at(90) == []  # 75% of two minutes: met
    assert judged_at(100) == ["objective.at_risk"]
    assert judged_at(110) == [], "told once per change"
    assert 109 < _oldest_metric(api) < 111
    assert judged_at(121) == ["objective.breached"]
    assert judged_at(125) == []
    objective = Objective.objects.get()
    assert (objective.state, objective.state_since) == ("breached", first + timedelta(seconds=121))
    client.force_login(operator)
    assert "two minutes: breached" in client.get("/").content.decode()

    rounds.replay(list(DeadLetter.objects.filter(place=place).values_list("pk", flat=True)))
    kit.wait_depth(work, 3)
    assert judged_at(130) == ["objective.recovered"]
    assert judged_at(140) == []
    assert _oldest_metric(api) == 0

    for pk in Delivery.objects.filter(status="pending").order_by("id").values_list("pk", flat=True):
        deliver(pk)
    deadline = time.monotonic() + 10
    while len(http.json()) < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    told = http.json()
    assert [message["event"] for message in told] == EVENTS
    assert all("(owner olga)" in message["subject"] and message["details"]["owner"] == "olga" for message in told)
    assert told[1]["place"] == str(DeadPlace.objects.get(pk=place.pk))
    audited = AuditEvent.objects.filter(action__startswith="objective.").order_by("id")
    assert [(e.action, e.actor_name) for e in audited] == [
        ("objective.set", "olga"), ("objective.at_risk", "system:objectives"),
        ("objective.breached", "system:objectives"), ("objective.recovered", "system:objectives")]
