"""Issue 51: a person subscribes themselves to a view's new letters, no admin needed, by e-mail
to their account's address, through a real SMTP server on loopback: a viewer hears at once of
the letters they may see, masked as they see them; a digest every N minutes from the view's
page; stopping; an account without an address is told why; every change is audited."""

from __future__ import annotations

import pytest

from console.jobs.automation.rules_at_work import apply_rules
from console.models import AuditEvent, Delivery, Subscription
from console.notifications.delivery import deliver
from console.services.redaction import do_set_redaction_rule
from console.services.saved_views import do_save_view
from tests.access.masked_value import CARD, CARD_RULE
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db



def test_a_viewer_hears_of_a_views_new_letters_by_email_masked(memory_broker, people, signed_in_as, smtp):
    place = memory_place(memory_broker)
    do_set_redaction_rule(actor="tests", kind=CARD_RULE[0], pattern=CARD_RULE[1])
    view = do_save_view(actor=people["admin"], name="timeouts", filter={"exception": "Timeout"}, sharing="everyone")
    vera = people["viewer"]
    vera.email = "vera@example.test"
    vera.save()
    client = signed_in_as(vera)
    assert client.get(f"/api/views/{view.pk}/subscription/").json()["subscribed"] is False
    made = client.post(f"/api/views/{view.pk}/subscription/", {}, content_type="application/json")
    assert made.status_code == 201, made.content
    assert made.json() == {"subscribed": True, "digest_minutes": None, "address": "vera@example.test"}
    again = client.post(f"/api/views/{view.pk}/subscription/", {}, content_type="application/json")
    assert again.status_code == 400 and "already" in again.json()["detail"]

    for n in range(3):
        store_letter(place, f'{{"n": {n}}}'.encode(), exception_type=f"TimeoutError {CARD}")
    store_letter(place, b"{}", exception_type="KeyError")  # not in the view
    apply_rules()
    for pk in Delivery.objects.filter(status="pending").values_list("pk", flat=True):
        deliver(pk)
    (message,) = smtp.messages
    assert message[0] == ["vera@example.test"] and "3 new letters in view timeouts" in message[1]
    assert CARD not in message[1], "told as the viewer sees it: masked"

    assert client.delete(f"/api/views/{view.pk}/subscription/").status_code == 204
    assert not Subscription.objects.filter(user=vera).exists()
    actions = list(AuditEvent.objects.filter(actor_name="vera").order_by("id").values_list("action", flat=True))
    assert actions == ["channel.added", "subscription.added", "subscription.removed"]


def test_a_digest_from_the_views_page_and_an_account_without_an_address(memory_broker, people, signed_in_as):
    memory_place(memory_broker)
    view = do_save_view(actor=people["admin"], name="everything", filter={}, sharing="everyone")
    otto = signed_in_as(people["operator"])  # no e-mail address
    otto.post(f"/views/{view.pk}/subscription/", {"digest_minutes": "15"})
    page = otto.get(f"/views/{view.pk}/").content.decode()
    assert "no e-mail address" in page and not Subscription.objects.exists()

    people["operator"].email = "otto@example.test"
    people["operator"].save()
    assert otto.post(f"/views/{view.pk}/subscription/", {"digest_minutes": "15"}).status_code == 302
    (mine,) = Subscription.objects.filter(user=people["operator"])
    assert mine.digest_minutes == 15 and mine.view == view and mine.channel.target == "otto@example.test"
    assert "as a digest every 15 minutes" in otto.get(f"/views/{view.pk}/").content.decode()
    refused = otto.post(f"/views/{view.pk}/subscription/", {"digest_minutes": "9999"})
    assert refused.status_code == 302 and Subscription.objects.get().digest_minutes == 15
    otto.post(f"/views/{view.pk}/subscription/", {"stop": "1"})
    assert not Subscription.objects.exists()
