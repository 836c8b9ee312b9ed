"""Wrong credentials and an unreachable broker give one clear BrokerError: it names the
broker's address, never the password, says whether trying again can help, and leaves the
dead place's messages where they were."""

from __future__ import annotations

import json

import pytest

from console.brokers import BrokerError
from console.models import AuditEvent, DeadPlace
from console.services.brokers import check_broker, do_add_broker, do_discover
from tests.contract.harnesses import WRONG_SECRET


def _fails_clearly(harness, dead, bad) -> None:
    before = harness.dead_state()
    broker = do_add_broker(actor=harness.operator, name=f"bad-{harness.suffix}", kind=harness.kind, **bad.settings)
    errors = []
    for attempt in (check_broker, lambda b: do_discover(b, actor=harness.operator)):
        with pytest.raises(BrokerError) as failed:
            attempt(broker)
        errors.append(failed.value)
    with pytest.raises(BrokerError) as failed:
        with broker.adapter() as adapter, adapter.open_capture(dead.ref, prefetch=10) as session:
            session.next_batch(10, 0)
    errors.append(failed.value)

    for error in errors:
        assert any(address in error.message for address in bad.addresses), error.message
        assert WRONG_SECRET not in error.message
        assert error.permanent is bad.permanent, error.message
    broker.refresh_from_db()
    assert broker.reachable is False and any(address in broker.last_error for address in bad.addresses)
    assert WRONG_SECRET not in broker.last_error
    assert not DeadPlace.objects.filter(broker=broker).exists()
    audit = json.dumps([[e.details, e.target, e.reason] for e in AuditEvent.objects.all()], default=str)
    assert WRONG_SECRET not in audit
    assert harness.dead_state() == before, "a failed attempt leaves the dead place as it was"


def test_wrong_credentials_are_a_clear_permanent_error_and_change_nothing(harness, dead):
    with harness.wrong_credentials() as bad:
        _fails_clearly(harness, dead, bad)


def test_an_unreachable_broker_is_a_clear_temporary_error_and_changes_nothing(harness, dead):
    with harness.unreachable() as bad:
        _fails_clearly(harness, dead, bad)
