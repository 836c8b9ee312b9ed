"""Metrics labels are text that leaves the console (design invariant 9): a rule, channel or
broker named with a value a redaction rule masks is scraped masked, as an export shows it."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from console.jobs.automation.rules_at_work import apply_rules
from console.models import Broker, Delivery
from console.services.channels import do_add_channel
from console.services.redaction import do_set_redaction_rule
from console.services.rules import do_create_rule
from tests.access.masked_value import CARD, CARD_RULE, leaks
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


def test_names_people_chose_are_scraped_masked(client, memory_broker, people, settings):
    settings.DLO_METRICS_TOKEN = "scrape-me"
    do_set_redaction_rule(actor="tests", kind=CARD_RULE[0], pattern=CARD_RULE[1])
    place = memory_place(memory_broker)
    store_letter(place, b"{}")
    Broker.objects.filter(pk=place.broker_id).update(reachable=True, name=f"mem-{CARD}")
    rule = do_create_rule(actor=people["operator"], name=f"hold {CARD}", action={"kind": "hold"}, enabled=True)
    apply_rules()
    channel = do_add_channel(actor="tests", name=f"ops {CARD}", kind="webhook", target="http://127.0.0.1:9/hook")
    Delivery.objects.create(channel=channel, event="group.new", key="k", subject="s", status="failed",
                            send_after=rule.created_at)
    text = client.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-me").content.decode()
    assert leaks(text) == []
    labels = {value for family in text_string_to_metric_families(text) for sample in family.samples
              for value in sample.labels.values()}
    assert {"mem-***", "hold ***", "ops ***", "orders.dlq"} <= labels
