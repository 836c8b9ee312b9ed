"""A broker's page: its health, its dead places with their counts, what its adapter can do,
and (where that changes nothing) a look at a place's messages on the broker, escaped."""

from __future__ import annotations

import pytest
from django.urls import reverse

from console.brokers.memory.adapter import Message
from console.models import DeadPlace
from console.services.brokers import do_discover

pytestmark = pytest.mark.django_db


def test_the_page_shows_health_places_and_capabilities(signed_in, memory_broker, operator):
    fake, broker = memory_broker
    fake.queue("orders.dlq").append(Message(b"{}", {"x-origin-queue": "orders"}))
    do_discover(broker, actor=operator)
    signed_in.post(reverse("broker-check", args=[broker.pk]))

    html = signed_in.get(reverse("broker", args=[broker.pk])).content.decode()
    assert "reachable" in html and "version memory" in html
    place = DeadPlace.objects.get(broker=broker)
    assert reverse("place", args=[place.pk]) in html and "orders.dlq" in html
    assert "Browse without changing messages: yes" in html
    assert "Server-side move: no" in html


def test_a_look_at_the_place_on_the_broker_escapes_what_it_shows_and_takes_nothing(
    signed_in, memory_broker, operator
):
    fake, broker = memory_broker
    fake.queue("orders.dlq").append(Message(b"<img src=x onerror=alert(1)>", {"x-origin-queue": "<b>o</b>"}))
    (place,) = do_discover(broker, actor=operator)
    html = signed_in.get(reverse("place-peek", args=[broker.pk, place.pk])).content.decode()
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "<img src=x" not in html
    assert "&lt;b&gt;o&lt;/b&gt;" in html
    assert len(fake.queue("orders.dlq")) == 1


def test_a_failed_check_is_shown_on_the_page(signed_in, memory_broker):
    fake, broker = memory_broker
    fake.down = True
    response = signed_in.post(reverse("broker-check", args=[broker.pk]), follow=True)
    html = response.content.decode()
    assert "mem did not answer: memory broker is down" in html and "unreachable" in html
