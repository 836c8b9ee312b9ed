"""A consumer group's poison entries kept in custody: an entry delivered past the threshold
after keeping was turned on is in custody within 5 s, taken by the keeper process, and acked
in the group."""

from __future__ import annotations

import time

import pytest

from tests.flow import discovered, in_custody_within, keep

pytestmark = [pytest.mark.keeper, pytest.mark.redis, pytest.mark.django_db(transaction=True)]


def test_an_entry_over_the_threshold_is_in_custody_within_seconds(redis_client, poisoned, redis_broker, operator,
                                                                   keeper):
    redis_client.xadd(poisoned.stream, {"body": "died before keeping"})
    poisoned.fail(times=4)
    place = keep(discovered(redis_broker, operator, poisoned.group, scope=poisoned.stream), operator)
    keeper.start()
    in_custody_within(place, b"died before keeping", seconds=15)  # the keeper's first look includes start-up

    redis_client.xadd(poisoned.stream, {"body": "died while kept"})
    poisoned.fail(times=4)
    in_custody_within(place, b"died while kept")
    # The keeper acks in the group once the letter is committed: a moment after it is in custody.
    acked_by = time.monotonic() + 10
    while poisoned.deliveries() and time.monotonic() < acked_by:
        time.sleep(0.05)
    assert poisoned.deliveries() == {}
