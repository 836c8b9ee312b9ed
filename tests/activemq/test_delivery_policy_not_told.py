"""Issue 17, point 8 for ActiveMQ Classic over STOMP: no frame tells a queue's redelivery policy
(each client's RedeliveryPolicy decides), so the origin's policy says it is not told."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from console.models import Origin

pytestmark = [pytest.mark.activemq, pytest.mark.django_db]


def test_the_origin_policy_is_not_told_by_the_broker(make_broker, operator, names):
    broker = make_broker()
    Origin.objects.create(broker=broker, name=names("orders"))
    api = APIClient()
    api.force_authenticate(operator)
    (origin,) = api.get("/api/origins/", {"broker": broker.pk}).json()
    assert origin["policy"] == ("not told by the broker; each client's RedeliveryPolicy decides "
                                "(ActiveMQ's default: 6 redeliveries, then its DLQ)")
