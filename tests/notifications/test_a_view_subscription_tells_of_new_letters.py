"""Issue 51: subscriptions to a saved view's new letters, through a real webhook receiver on
loopback. A burst of 50 matching letters (and others that do not match, or lie in a place the
subscriber may not see) arrives; the rules' round matches them once. A digest subscription
(every 5 minutes) receives one message with the right counts when the digest is due, and nothing
more for the same letters; a subscription "at once" is told at the round, with the count its
subscriber may see."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from console.jobs.automation.rules_at_work import apply_rules
from console.models import Delivery, RoleScope
from console.notifications.delivery import deliver
from console.services.channels import do_add_channel, do_subscribe
from console.services.saved_views import do_save_view
from console.services.view_subscriptions import tell_digests
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


def _send_all() -> None:
    for pk in Delivery.objects.filter(status="pending").order_by("id").values_list("pk", flat=True):
        deliver(pk)


def test_a_digest_tells_the_burst_once_with_its_counts(memory_broker, operator, admin, django_user_model, http):
    mine = memory_place(memory_broker)
    theirs = memory_place(memory_broker, origin="billing")
    limited = django_user_model.objects.create_user("lima", password="lima-pass-123")
    from console.access.roles import set_role
    set_role(limited, "operator")
    RoleScope.objects.create(user=limited, place=mine)
    view = do_save_view(actor=operator, name="timeouts", filter={"exception": "Timeout"}, sharing="everyone")
    channel = do_add_channel(actor=admin, name="team", kind="webhook", target=http.url)
    digest = do_subscribe(actor=admin, channel=channel, events=[], user=limited, view=view, digest_minutes=5)
    at_once = do_subscribe(actor=admin, channel=channel, events=["view.letters"], user=admin, view=view)

    for n in range(50):
        store_letter(mine, f'{{"n": {n}}}'.encode(), exception_type="TimeoutError")
    for n in range(7):
        store_letter(mine, f'{{"k": {n}}}'.encode(), exception_type="KeyError")  # not in the view
    for n in range(10):
        store_letter(theirs, f'{{"b": {n}}}'.encode(), exception_type="TimeoutError")  # lima may not see them
    apply_rules()
    apply_rules()  # nothing new: nothing told again
    _send_all()
    (told,) = http.json()
    assert told["event"] == "view.letters" and told["details"]["new_letters"] == 60, "the admin sees both places"
    assert "60 new letters in view timeouts" in told["subject"]

    assert tell_digests() == 0, "the digest is not due yet"
    assert tell_digests(now=timezone.now() + timedelta(minutes=6)) == 1
    assert tell_digests(now=timezone.now() + timedelta(minutes=12)) == 0
    _send_all()
    assert len(http.json()) == 2
    summed = http.json()[1]
    assert summed["details"]["new_letters"] == 50 and summed["details"]["digest"] is True
    assert summed["details"]["by_place"] == {str(mine): 50}
    assert len(summed["details"]["sample"]) == 10 and "(digest of 5 min)" in summed["subject"]
    assert digest.matches.count() == 50 and at_once.matches.count() == 60


def test_a_view_subscription_is_for_one_person_who_may_open_the_view(memory_broker, operator, admin):
    from console.notifications.kinds.base import NotifyError

    memory_place(memory_broker)
    private = do_save_view(actor=operator, name="mine alone", filter={})
    channel = do_add_channel(actor=admin, name="team", kind="webhook", target="http://127.0.0.1:9/hook")
    with pytest.raises(NotifyError, match="may not open"):
        do_subscribe(actor=admin, channel=channel, events=[], user=admin, view=private)
    with pytest.raises(NotifyError, match="alone"):
        do_subscribe(actor=admin, channel=channel, events=["group.new"], user=operator, view=private)
    with pytest.raises(NotifyError, match="name the view"):
        do_subscribe(actor=admin, channel=channel, events=["view.letters"], user=operator)
    assert do_subscribe(actor=admin, channel=channel, events=[], user=operator, view=private).events == [
        "view.letters"]
