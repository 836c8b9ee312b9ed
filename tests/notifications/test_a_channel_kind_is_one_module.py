"""A kind of channel is one module behind the registry (console.notifications): a kind written
here, in a test module, and registered by one line, is taken by the audited service, checks its
own targets, and delivers through a real receiver on loopback, with no other file edited. A
kind that says trying again cannot help (a permanent TransportError) fails at once, one attempt
written; the unknown kind is refused naming the registered ones."""

from __future__ import annotations

import httpx
import pytest

from console.models import AuditEvent, Channel, Delivery
from console.notifications.delivery import deliver
from console.notifications.kinds.base import ChannelKind, NotifyError, TransportError, headline
from console.notifications.registry import KINDS
from console.services.channels import do_add_channel, notify_test
from tests.notifications.receivers import HttpReceiver

pytestmark = pytest.mark.django_db


class Pager(ChannelKind):
    """Pages with a plain-text line; a pager that refuses a page never takes it later."""

    name = "pager"

    def parse(self, target: str) -> tuple[str, str | None]:
        if not target.startswith("http://127.0.0.1:"):
            raise NotifyError("a pager's target is a loopback URL")
        return target, None

    def send(self, channel: Channel, delivery: Delivery) -> None:
        answer = httpx.post(channel.delivery_target, content=headline(delivery).encode(), timeout=5)
        if answer.status_code >= 300:
            raise TransportError(f"the pager refused it ({answer.status_code})", permanent=True)


@pytest.fixture(autouse=True)
def pager():
    KINDS.register("pager", f"{__name__}.Pager")
    yield
    KINDS.unregister("pager")


def test_a_registered_kind_is_added_audited_and_delivers(admin, http):
    channel = do_add_channel(actor=admin, name="on call", kind="pager", target=http.url)
    delivery = notify_test(channel, actor=admin)

    assert deliver(delivery.pk) == "sent"
    assert [request["body"].decode() for request in http.requests] == ["[test] test of channel on call"]
    added = AuditEvent.objects.get(action="channel.added")
    assert (added.details["kind"], added.details["target"]) == ("pager", http.url)


def test_the_kind_checks_its_own_targets(admin):
    with pytest.raises(NotifyError, match="a pager's target is a loopback URL"):
        do_add_channel(actor=admin, name="elsewhere", kind="pager", target="https://pager.example/")
    assert not Channel.objects.exists()


def test_a_permanent_failure_is_not_tried_again(admin, settings):
    settings.DLO_NOTIFY_ATTEMPTS = 5
    refusing = HttpReceiver(fail_first=10)
    try:
        channel = do_add_channel(actor=admin, name="on call", kind="pager", target=refusing.url)
        delivery = notify_test(channel, actor=admin)
        assert deliver(delivery.pk) == "failed"  # no Failed raised: the task does not retry
    finally:
        refusing.close()
    delivery.refresh_from_db()
    assert len(refusing.requests) == 1
    assert [attempt["outcome"] for attempt in delivery.attempts] == ["failed"]
    assert delivery.last_error == "RuntimeError: the pager refused it (500)"


def test_an_unknown_kind_is_refused_naming_the_registered_ones(admin):
    with pytest.raises(NotifyError, match="kind must be one of webhook, slack, email, apprise, pager"):
        do_add_channel(actor=admin, name="fax", kind="fax", target="+1 555 0100")
