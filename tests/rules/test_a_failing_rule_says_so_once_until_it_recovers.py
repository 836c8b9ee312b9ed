"""Issue 29, "what to build" 4: a rule whose jobs cannot be done says so. An operator limited to a
place enables a retry rule over it; its broker then cannot be asked where the letters' origin
dead-letters (so the guard may not let him publish there). Each round refuses the letters:
the rule's ``last_error`` says why, on the Rules page too, and ``rule.failed`` is told once,
not once a round. When the rule acts again it recovers (``last_error`` cleared), and a new
failure is told again."""

from __future__ import annotations

import pytest
from django.test import Client

from console.access.roles import OPERATOR, set_role
from console.jobs.automation.rules_at_work import apply_rules
from console.models import Delivery, Job, RoleScope, Rule
from console.services.channels import do_add_channel, do_subscribe
from console.services.rules import do_create_rule
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


def told() -> int:
    """How many times ``rule.failed`` was told (a storm adds to a waiting message's count)."""
    return sum(Delivery.objects.filter(event="rule.failed").values_list("count", flat=True))


def test_a_rule_that_cannot_act_says_so_once_until_it_acts_again(memory_broker, admin, django_user_model):
    fake, _ = memory_broker
    place = memory_place(memory_broker)  # orders dead-letters into orders.dlq, as the broker says
    otto = django_user_model.objects.create_user("otto")
    set_role(otto, OPERATOR)
    RoleScope.objects.create(user=otto, place=place)
    channel = do_add_channel(actor=admin, name="ops", kind="email", target="ops@example.com")
    do_subscribe(actor=admin, channel=channel, events=["rule.failed"], user=admin)
    store_letter(place, b'{"n": 1}')
    rule = do_create_rule(actor=otto, name="retry orders", scope={"place": place.pk}, enabled=True,
                          action={"kind": "retry", "ladder": [{"delay_seconds": 0, "tries": 5}]})

    fake.down = True
    apply_rules()
    error = Rule.objects.get(pk=rule.pk).last_error
    assert "memory broker is down" in error and "'orders'" in error, error
    assert not Job.objects.filter(kind="replay").exists()
    assert told() == 1
    page = Client()
    page.force_login(admin)
    shown = page.get("/rules/").content.decode()
    assert "Failing:" in shown and "memory broker is down" in shown

    store_letter(place, b'{"n": 2}')
    apply_rules()  # still failing: not told again
    assert Rule.objects.get(pk=rule.pk).last_error and told() == 1

    fake.down = False
    store_letter(place, b'{"n": 3}')
    apply_rules()
    assert Job.objects.filter(kind="replay", actor_name="rule:retry orders@v1").exists()
    assert Rule.objects.get(pk=rule.pk).last_error == ""
    assert "Failing:" not in page.get("/rules/").content.decode()

    fake.down = True
    store_letter(place, b'{"n": 4}')
    apply_rules()
    assert "memory broker is down" in Rule.objects.get(pk=rule.pk).last_error
    assert told() == 2
