"""An operator keeps a RabbitMQ dead queue in custody from its page: gives a reason, presses
"Keep in custody", and a message that dies afterwards shows up on the page after a reload,
taken by the keeper process; the page names the keep job and how many it took. "Stop keeping"
turns it off again. A broker's page sets its default for new places the same way."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from console.models import AuditEvent, DeadLetter, DeadPlace
from console.services.brokers import do_add_broker, do_discover
from tests.rabbitmq.kit import MANAGEMENT_URL, PASSWORD, USER, RabbitKit

pytestmark = [pytest.mark.keeper, pytest.mark.browser, pytest.mark.rabbitmq, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def kit():
    helper = RabbitKit()
    yield helper
    helper.close()


def test_keep_a_place_from_its_page_and_see_letters_arrive(signed_in_page, kit, keeper, screenshot):
    broker = do_add_broker(actor="tests", name=f"rabbit-{kit.suffix}", kind="rabbitmq",
                           url=f"amqp://{USER}:{PASSWORD}@127.0.0.1:5672/%2F", management_url=MANAGEMENT_URL)
    dlq = kit.queue(kit.name("payments.dlq"))
    work = kit.queue(kit.name("payments"), {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
    (place,) = [p for p in do_discover(broker, actor="tests") if p.name == dlq]
    keeper.start()
    page = signed_in_page

    page.goto(f"/places/{place.pk}/")
    keeping = page.locator("#keeping")
    expect(keeping).to_contain_text("no: letters are taken when someone captures")
    keeping.get_by_label("Reason").fill("payments fail at night")
    keeping.get_by_role("button", name="Keep in custody").click()
    expect(page.get_by_text(f"{dlq} is now kept in custody.")).to_be_visible()
    assert DeadPlace.objects.get(pk=place.pk).keep_in_custody

    kit.publish(work, b'{"payment": 7}')
    kit.reject(work)
    kit.wait_for(lambda: DeadLetter.objects.filter(place=place).exists(), "the letter in custody", seconds=10)
    page.reload()
    expect(page.locator("#keeping")).to_contain_text("1 taken")
    expect(page.get_by_text('{"payment": 7}')).to_be_visible()
    screenshot(page, "place_kept")

    page.locator("#keeping").get_by_label("Reason").fill("night batch fixed")
    page.get_by_role("button", name="Stop keeping").click()
    expect(page.get_by_text(f"{dlq} is no longer kept in custody.")).to_be_visible()
    actions = list(AuditEvent.objects.filter(action="place.keep").order_by("id").values_list("outcome", "reason"))
    assert actions == [("on", "payments fail at night"), ("off", "night batch fixed")]

    page.goto(f"/brokers/{broker.pk}/")
    section = page.locator("#keep-new-places")
    section.get_by_label("Reason").fill("every new queue")
    section.get_by_role("button", name="Keep new places in custody").click()
    expect(page.locator("#keep-new-places")).to_contain_text("kept in custody as soon as discovery finds them")
    assert AuditEvent.objects.filter(action="broker.keep_new_places", outcome="on").exists()
