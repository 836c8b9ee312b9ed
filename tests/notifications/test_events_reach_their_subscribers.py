"""Each kind of event reaches the channels of those subscribed to it, through real receivers on
loopback (an HTTP server for webhooks and Slack, aiosmtpd for e-mail): a new failure group, a
job waiting for approval (told only to those who may approve it), a job finished, a rule's
ladder run out, a letter quarantined, a breaker opened, a broker down, a place over its depth
threshold or growing faster than its threshold.
Nobody hears of a place outside their scope; masked content stays masked; a storm of a
thousand letters in one new group is one message. (Here the deliveries are sent by calling the
Celery task's code; tests/notifications/test_delivery_retries_in_a_real_worker.py has the worker.)"""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from console.access.roles import ADMIN, OPERATOR, set_role
from console.brokers import Received
from console.jobs.automation.periodic import check_brokers, sample_places
from console.jobs.automation.rules_at_work import apply_rules
from console.jobs.control import finish
from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.letters.envelope import FailureEnvelope
from console.models import Delivery, Job, LetterHandling, RoleScope
from console.notifications.delivery import deliver
from console.services.channels import do_add_channel, do_subscribe
from console.services.custody import REPLAY_ID_HEADER, store_captured
from console.services.redaction import do_set_redaction_rule
from console.services.rules import do_create_rule
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


def send_all() -> list[str]:
    """What the Celery task does with each waiting delivery: one attempt each."""
    return [deliver(pk) for pk in Delivery.objects.filter(status="pending").values_list("pk", flat=True)]


def hook(admin, http, name="ops-hook", secret="s3cret"):
    return do_add_channel(actor=admin, name=name, kind="webhook", target=http.url, secret=secret)


def test_a_new_group_is_told_once_signed_and_masked_however_many_letters(memory_broker, admin, operator, http):
    channel = hook(admin, http)
    do_subscribe(actor=admin, channel=channel, events=["group.new"], user=operator)
    do_set_redaction_rule(actor=admin, kind="regex", pattern=r"\d{4}-\d{4}-\d{4}-\d{4}")
    place = memory_place(memory_broker)
    envelope = FailureEnvelope(origin_queue="orders", reason="rejected", exception_type="CardDeclined",
                               exception_message="card 4111-1111-1111-1111 declined")
    storm = [Received(token=None, body=f'{{"n": {n}}}'.encode(), headers={}, properties={}, envelope=envelope)
             for n in range(1000)]
    store_captured(place, storm[:400], job=None, actor="tests")
    store_captured(place, storm[400:], job=None, actor="tests")

    assert send_all() == ["sent"]
    (request,) = http.requests
    body = json.loads(request["body"])
    assert body["event"] == "group.new" and body["place"] == str(place)
    assert "4111-1111-1111-1111" not in request["body"].decode() and "CardDeclined" in body["subject"]
    expected = hmac.new(b"s3cret", request["body"], hashlib.sha256).hexdigest()
    assert request["headers"]["X-DLO-Signature"] == f"sha256={expected}"


def test_a_subscriber_limited_to_place_a_hears_nothing_of_place_b(memory_broker, admin, django_user_model, http):
    a, b = memory_place(memory_broker, origin="orders"), memory_place(memory_broker, origin="billing")
    otto = django_user_model.objects.create_user("otto")
    set_role(otto, OPERATOR)
    RoleScope.objects.create(user=otto, place=a)
    do_subscribe(actor=admin, channel=hook(admin, http), events=["group.new", "breaker.opened"], user=otto)
    for n in range(3):
        store_letter(b, f'{{"ledger": {n}}}'.encode(), origin="billing", exception_type="LedgerError")
    assert send_all() == [] and http.requests == []
    store_letter(a, b'{"order": 1}', origin="orders", exception_type="OrderError")
    assert send_all() == ["sent"] and "OrderError" in http.json()[0]["subject"]


@pytest.mark.approvals  # the two-person rule applies (tests/conftest.py turns it off elsewhere)
def test_approval_finished_ladder_quarantine_breaker_and_depth_are_told(memory_broker, admin, operator, http, smtp,
                                                                        settings, django_user_model):
    settings.DLO_QUARANTINE_AFTER = 1
    settings.DLO_BREAKER_SAME = 3
    settings.DLO_BREAKER_ANY = 1000  # the burst below opens no second breaker
    fake, _ = memory_broker
    place = memory_place(memory_broker)
    second = django_user_model.objects.create_user("abe")
    set_role(second, ADMIN)
    mail = do_add_channel(actor=admin, name="approvers", kind="email", target="approvers@example.com")
    do_subscribe(actor=admin, channel=mail, events=["job.approval_needed"], user=second)  # may approve a purge
    others = do_add_channel(actor=admin, name="others", kind="email", target="others@example.com")
    do_subscribe(actor=admin, channel=others, events=["job.approval_needed"], user=admin)  # the requester
    do_subscribe(actor=admin, channel=others, events=["job.approval_needed"], user=operator)  # may not purge
    slack = do_add_channel(actor=admin, name="slack", kind="slack", target=http.url)
    do_subscribe(actor=admin, channel=slack, user=operator, events=[
        "job.finished", "job.failed", "job.paused", "rule.ladder_ran_out", "letter.quarantined", "breaker.opened"])
    do_set_redaction_rule(actor=admin, kind="regex", pattern=r"4111(-\d{4}){3}")
    do_subscribe(actor=admin, channel=hook(admin, http, name="details"), user=operator, events=["job.finished"])
    do_subscribe(actor=admin, channel=slack, user=operator, events=["place.depth"], place=place, threshold=2)
    do_subscribe(actor=admin, channel=slack, user=operator, events=["place.growth"], place=place, threshold=100)
    down = memory_broker_down(admin)
    do_subscribe(actor=admin, channel=slack, user=operator, events=["broker.down"])

    letters = [store_letter(place, f'{{"n": {n}}}'.encode(), exception_type="Timeout") for n in range(3)]  # breaker
    purge = request_job("purge", actor=admin, reason="personal data", ids=[letters[0].pk])  # always waits
    failed = request_job("mark_failed", actor=operator, reason="poison: card 4111-1111-1111-1111",
                         ids=[letters[1].pk])
    run_job(failed.pk)
    settings.DLO_BROKER_WAIT_SECONDS = 0
    fake.down = True  # a replay whose broker is gone fails
    broken = request_job("replay", actor=operator, reason="fixed?", ids=[letters[0].pk])
    assert run_job(broken.pk) == "failed"
    fake.down = False
    canary = request_job("replay", actor=operator, reason="try a few", ids=[letters[0].pk], canary_size=1)
    # What the runner does when the canary's watch pauses the job (console.jobs.engines.returns).
    Job.objects.filter(pk=canary.pk).update(pause_reason="canary: 1 of 1 letters came back")
    finish(Job.objects.get(pk=canary.pk), Job.Status.PAUSED, "paused by request after 1 letters")
    rule = do_create_rule(actor=operator, name="retry once", enabled=True,
                          action={"kind": "retry", "ladder": [{"delay_seconds": 0, "tries": 1}], "then": "hold"})
    LetterHandling.objects.create(letter=letters[2], rule=rule, version=1, tries=1, action="retry")
    apply_rules()  # its ladder has run out for that letter: it says so, then holds it
    parent = store_letter(place, b'{"loop": 1}', exception_type="Other")
    parent.replay_id = "loop-1"
    parent.save()
    store_letter(place, b'{"loop": 1}', headers={REPLAY_ID_HEADER: "loop-1"}, exception_type="Other2")  # quarantined
    fake.queue("orders.dlq").extend(fake_messages(3))
    sample_places()  # first sample: 3 on the broker, over the threshold of 2
    sample_places()  # still over it: not told again
    for n in range(150):  # 150 letters in a moment: far more than 100 a minute
        store_letter(place, f'{{"burst": {n}}}'.encode(), exception_type="Burst")
    sample_places()
    check_brokers()  # the broker that never answers: down since now
    check_brokers()  # still down: not told again

    assert set(send_all()) == {"sent"}
    (approval,) = smtp.messages
    assert approval[0] == ["approvers@example.com"] and f"job {purge.pk}" in approval[1]
    texts = [message["text"] for message in http.json() if "text" in message]
    (finished,) = [message for message in http.json() if message.get("event") == "job.finished"]
    assert finished["details"]["reason"].startswith("poison: card ") and "4111" not in finished["details"]["reason"]
    told = sorted(text.split("]")[0].strip("[") for text in texts)
    assert told == ["breaker.opened", "broker.down", "job.failed", "job.finished", "job.paused", "letter.quarantined",
                    "place.depth", "place.growth", "rule.ladder_ran_out"], texts
    everything = [request["body"].decode() for request in http.requests] + [content for _, content in smtp.messages]
    assert not [text for text in everything if "4111-1111-1111-1111" in text], "a masked value was sent"
    assert any("job.finished" in text for text in texts)
    assert any(f"{down.name} has not answered" in text for text in texts)
    assert Delivery.objects.filter(event="job.approval_needed").count() == 1


def fake_messages(count: int) -> list:
    from console.brokers.memory.adapter import Message

    return [Message(f"m{n}".encode()) for n in range(count)]


def memory_broker_down(admin):
    """A broker that never answers: an in-memory one marked down (console.brokers.memory)."""
    from console.brokers.memory.adapter import MemoryBroker
    from console.services.brokers import do_add_broker

    MemoryBroker.named("down-test").down = True
    return do_add_broker(actor=admin, name="down", kind="memory", url="memory://down-test")


def test_an_apprise_channel_reaches_its_service_and_keeps_its_url_secret(memory_broker, admin, operator, http):
    url = http.url.replace("http://", "json://")  # Apprise's JSON service, at the receiver on loopback
    channel = do_add_channel(actor=admin, name="apprise", kind="apprise", target=url)
    assert channel.target == "json://…" and channel.secret == url
    do_subscribe(actor=admin, channel=channel, events=["group.new"], user=operator)
    store_letter(memory_place(memory_broker), b'{"n": 1}', exception_type="AppriseError")
    assert send_all() == ["sent"]
    (message,) = http.json()
    assert "AppriseError" in message["title"]
