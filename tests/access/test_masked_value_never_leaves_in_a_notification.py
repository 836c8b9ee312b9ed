"""Issue 28, the masked-value walk's last leg: what the console sends out. A card number a
redaction rule masks is planted in what people write (a broker's name, a job's reason and
ticket, a rule's name) and in what messages carry (a letter's exception type and message, its
headers and body); the events these reach are delivered through real receivers on loopback (a
webhook, a Slack-style hook and an e-mail over SMTP): no delivered request or message holds the
number, plain, JSON-escaped or base64, while each event still arrived."""

from __future__ import annotations

import json

import pytest

from console.jobs.automation.periodic import check_brokers
from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import Delivery
from console.notifications.delivery import deliver
from console.services.channels import do_add_channel, do_subscribe
from console.services.redaction import do_set_redaction_rule
from tests.access.masked_value import CARD, CARD_RULE, leaks
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db

EVENTS = ["group.new", "job.finished", "breaker.opened", "broker.down"]


def test_no_delivered_notification_holds_a_masked_value(memory_broker, admin, operator, http, smtp, settings):
    from console.brokers.memory.adapter import MemoryBroker
    from console.services.brokers import do_add_broker

    settings.DLO_BREAKER_SAME = 3
    settings.DLO_BROKER_WAIT_SECONDS = 0
    do_set_redaction_rule(actor=admin, kind=CARD_RULE[0], pattern=CARD_RULE[1])
    for kind, target in (("webhook", http.url), ("slack", http.url), ("email", "ops@example.com")):
        channel = do_add_channel(actor=admin, name=f"ops by {kind}", kind=kind, target=target)
        do_subscribe(actor=admin, channel=channel, events=EVENTS, user=operator)

    place = memory_place(memory_broker)
    letters = [store_letter(place, json.dumps({"card": CARD, "n": n}).encode(), headers={"x-card": CARD},
                            exception_type=f"Card{CARD}Declined", exception_message=f"card {CARD} declined")
               for n in range(3)]  # a new group, and three in a row open the origin's breaker
    job = request_job("mark_failed", actor=operator, reason=f"card {CARD} will never pass", ticket=f"T-{CARD}",
                      ids=[letters[0].pk])
    run_job(job.pk)
    MemoryBroker.named("down-test").down = True
    do_add_broker(actor=admin, name=f"card-{CARD}", kind="memory", url="memory://down-test")
    check_brokers()

    sent = [deliver(pk) for pk in Delivery.objects.filter(status="pending").values_list("pk", flat=True)]
    assert sent and set(sent) == {"sent"}
    delivered = [request["body"] for request in http.requests] + [content for _, content in smtp.messages]
    told = {event for event in EVENTS if any(event.encode() in (text if isinstance(text, bytes) else text.encode())
                                             for text in delivered)}
    assert told == set(EVENTS), f"every event arrived: {told}"
    leaked = [found for text in delivered if (found := leaks(text))]
    assert leaked == [], "a masked value was delivered"
