"""Issue 17, point 7 (seed 001's breaker) on the real RabbitMQ: messages rejected by a consumer,
their exception type carried in Spring AMQP's ``x-exception-stacktrace`` header, arrive from
one origin; three in a row with the same exception open the origin's breaker, and rules may
then replay none of its letters (console.services.safeguards.rules_may_replay) until a person
closes it through the API; an enabled rule that would replay them leaves them alone until then.
The API lists the origin with its breaker, streak and policy."""

from __future__ import annotations

import pytest

from console.jobs.automation.rules_at_work import apply_rules
from console.models import AuditEvent, DeadLetter, Job, Origin
from console.services.audit import verify_chain
from console.services.safeguards import rules_may_replay

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db]


def failed_with(exception: str, n: int) -> tuple:
    stack = f"{exception}: order {n} failed\n\tat com.shop.Orders.handle(Orders.java:42)"
    return (f'{{"order": {n}}}'.encode(), {"x-exception-stacktrace": stack})


def test_three_in_a_row_with_the_same_exception_open_the_breaker_until_a_person_closes_it(
        captured, operator_api):
    work, place, letters = captured("billing", [
        failed_with("java.net.SocketTimeoutException", 1),
        failed_with("com.shop.CardDeclinedException", 2),
        failed_with("com.shop.CardDeclinedException", 3),
        failed_with("com.shop.CardDeclinedException", 4),
    ])
    assert [letter.exception_type for letter in letters] == ["java.net.SocketTimeoutException"] + [
        "com.shop.CardDeclinedException"] * 3
    origin = Origin.objects.get(broker=place.broker, scope=place.scope, name=work)
    assert (origin.streak_exception, origin.streak_same, origin.streak_any) == (
        "com.shop.CardDeclinedException", 3, 4)
    assert origin.breaker_open and "3 letters in a row failed with com.shop.CardDeclinedException" in (
        origin.breaker_reason)
    opened = AuditEvent.objects.get(action="breaker_open")
    assert (opened.actor_name, opened.target) == ("system:safeguards", work)

    held = DeadLetter.objects.filter(place=place, state="held")
    assert list(rules_may_replay(held)) == []
    # An enabled rule that would replay them leaves them alone while the breaker is open.
    made = operator_api.post("/api/rules/", {
        "name": "retry billing", "scope": {"place": place.pk}, "enabled": True,
        "action": {"kind": "retry", "ladder": [{"delay_seconds": 0, "tries": 3}]}}, format="json").json()
    dry = operator_api.post(f"/api/rules/{made['id']}/dry-run/").json()
    assert (dry["by_action"], dry["would_run"]) == ({"retry": 4}, {"retry": 0})
    assert [(r["action"], r["code"], r["count"]) for r in dry["refused"]] == [("retry", "breaker_open", 4)]
    apply_rules()
    assert not Job.objects.filter(actor_name="rule:retry billing@v1").exists()

    (listed,) = [o for o in operator_api.get("/api/origins/").json() if o["name"] == work]
    assert listed["breaker_open"] is True and listed["breaker_reason"] == origin.breaker_reason
    assert (listed["streak"]["exception"], listed["streak"]["same"], listed["streak"]["any"]) == (
        "com.shop.CardDeclinedException", 3, 4)
    assert listed["policy"] == (f"no delivery limit, a rejected letter goes to {place.name}; "
                                "then rule 'retry billing' retries 3 × at once, then hold for a person")

    refused = operator_api.post(f"/api/origins/{origin.pk}/close-breaker/", {}, format="json")
    assert refused.status_code == 400 and Origin.objects.get(pk=origin.pk).breaker_open
    closed = operator_api.post(f"/api/origins/{origin.pk}/close-breaker/",
                               {"reason": "card processor back up"}, format="json")
    assert closed.status_code == 200, closed.content
    assert (closed.json()["breaker_open"], closed.json()["streak"]["any"]) == (False, 0)
    assert sorted(rules_may_replay(held).values_list("id", flat=True)) == [letter.pk for letter in letters]
    apply_rules()  # closed: the rule replays them now
    (job,) = Job.objects.filter(actor_name="rule:retry billing@v1")
    assert (job.kind, sorted(job.selection["ids"])) == ("replay", [letter.pk for letter in letters])
    event = AuditEvent.objects.get(action="breaker_close")
    assert (event.actor_name, event.reason, event.target) == ("olga", "card processor back up", work)
    assert verify_chain().ok


def test_failures_with_different_exceptions_leave_the_breaker_closed(captured):
    work, place, _ = captured("shipping", [
        failed_with("com.shop.CardDeclinedException", 1),
        failed_with("java.net.SocketTimeoutException", 2),
        failed_with("com.shop.CardDeclinedException", 3),
    ])
    origin = Origin.objects.get(broker=place.broker, name=work)
    assert (origin.streak_same, origin.streak_any, origin.breaker_open) == (1, 3, False)
    assert rules_may_replay(DeadLetter.objects.filter(place=place)).count() == 3
