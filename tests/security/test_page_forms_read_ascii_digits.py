"""The pages' number fields read ASCII digits, as the API's filters do (design invariant 13):
Django's IntegerField reads '٣' as 3 through ``int()``, and took numbers no column could hold
(a subscription's threshold of 10**30 was a 500). Such a value is the form's error now, and
nothing is saved."""

from __future__ import annotations

import pytest

from console.models import Rule, Subscription
from console.services.channels import do_add_channel

pytestmark = [pytest.mark.django_db, pytest.mark.role("admin")]


@pytest.fixture
def pages(client, operator):
    client.force_login(operator)
    return client


@pytest.mark.parametrize("position", ["٣", "²", "9" * 30])
def test_a_rules_position_in_other_digits_is_the_forms_error(pages, position):
    answer = pages.post("/rules/", {"name": "r", "position": position, "kind": "hold", "reason": "r"})
    assert answer.status_code == 200 and not Rule.objects.exists()


@pytest.mark.parametrize("threshold", ["٣", "²", str(10**30)])
def test_a_subscriptions_threshold_no_column_holds_is_the_forms_error(pages, operator, threshold):
    channel = do_add_channel(actor="tests", name="ops", kind="webhook", target="http://127.0.0.1:9/h")
    answer = pages.post("/notifications/", {"subscription-channel": channel.pk, "subscription-user": operator.username,
                                            "subscription-events": ["group.new"], "subscription-threshold": threshold})
    assert answer.status_code == 200 and not Subscription.objects.exists()
    assert pages.post("/notifications/", {"subscription-channel": channel.pk, "subscription-user": operator.username,
                                          "subscription-events": ["group.new"],
                                          "subscription-threshold": "3"}).status_code == 302
