"""``/metrics`` for Prometheus: off (404) without DLO_METRICS_TOKEN, 401 without the bearer token,
and with it the text format (read back with prometheus_client's own parser) whose figures are
the database's: depth and held letters per place, the oldest held letter's age, arrivals,
letters by state, jobs by kind and status, whether each broker answered, and what rules did."""

from __future__ import annotations

import pytest
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from console.jobs.automation.rules_at_work import apply_rules
from console.jobs.door.runner import run_job
from console.models import Broker, Delivery, Job
from console.services.channels import do_add_channel
from console.services.rules import do_create_rule
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


def _samples(text: str) -> dict[tuple[str, tuple], float]:
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def test_metrics_are_read_from_the_database_behind_a_bearer_token(client, memory_broker, operator, settings):
    settings.DLO_METRICS_TOKEN = ""
    assert client.get("/metrics").status_code == 404
    settings.DLO_METRICS_TOKEN = "scrape-me"
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401

    place = memory_place(memory_broker)
    letters = [store_letter(place, f'{{"n": {n}}}'.encode(), exception_type="KeyError") for n in range(3)]
    Broker.objects.filter(pk=place.broker_id).update(reachable=True)
    do_create_rule(actor=operator, name="give up", match={"exception_type": "KeyError"},
                   action={"kind": "mark_failed"}, enabled=True)
    apply_rules()
    run_job(Job.objects.get(kind="mark_failed").pk)
    store_letter(place, b'{"late": 1}')
    channel = do_add_channel(actor="tests", name="ops", kind="webhook", target="http://127.0.0.1:9/hook")
    Delivery.objects.create(channel=channel, event="group.new", key="k", subject="s", status="failed",
                            send_after=timezone.now())

    answer = client.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-me")
    assert answer.status_code == 200 and answer["Content-Type"].startswith("text/plain")
    samples = _samples(answer.content.decode())
    where = (("broker", "mem"), ("place", "orders.dlq"))
    assert samples[("dlo_place_held_letters", where)] == 1
    assert samples[("dlo_place_arrivals_total", where)] == 4
    assert samples[("dlo_place_depth", where)] == 0
    assert 0 <= samples[("dlo_place_oldest_letter_age_seconds", where)] < 60
    assert samples[("dlo_letters", (("state", "failed"),))] == 3
    assert samples[("dlo_letters", (("state", "held"),))] == 1
    assert samples[("dlo_jobs", (("kind", "mark_failed"), ("status", "succeeded")))] == 1
    assert samples[("dlo_broker_up", (("broker", "mem"),))] == 1
    assert samples[("dlo_rule_actions_total", (("action", "mark_failed"), ("rule", "give up")))] == len(letters)
    assert samples[("dlo_notifications_failed_total", (("channel", "ops"),))] == 1
