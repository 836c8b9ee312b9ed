"""Issue 46: no action that cannot work. A place discovery no longer finds ("gone") offers no
capture on the inventory, which says why instead, and a capture asked for anyway (the page's
form, the API) is refused saying so, before any job is made; a broker known not to answer says
so where the capture button was."""

from __future__ import annotations

import pytest
from django.urls import reverse

from console.models import Broker, DeadPlace, Job
from tests.web.factory import memory_place

pytestmark = pytest.mark.django_db


def test_a_gone_place_offers_no_capture_and_refuses_one(signed_in, memory_broker):
    place = memory_place(memory_broker, origin="orders")
    DeadPlace.objects.filter(pk=place.pk).update(gone=True)
    inventory = signed_in.get(reverse("inventory")).content.decode()
    assert "gone from the broker: nothing to capture" in inventory
    assert reverse("place-capture", args=[place.pk]) not in inventory

    posted = signed_in.post(reverse("place-capture", args=[place.pk]), {"reason": "anyway"}, follow=True)
    assert "is gone from its broker" in posted.content.decode()
    api = signed_in.post(f"/api/places/{place.pk}/capture/", {"reason": "anyway"}, content_type="application/json")
    assert api.status_code == 400 and "is gone from its broker" in str(api.json())
    assert not Job.objects.filter(kind="capture").exists()


def test_a_broker_that_does_not_answer_says_so_instead_of_a_capture_button(signed_in, memory_broker):
    place = memory_place(memory_broker, origin="orders")
    Broker.objects.filter(pk=place.broker_id).update(reachable=False)
    inventory = signed_in.get(reverse("inventory")).content.decode()
    assert "the broker does not answer" in inventory
    assert reverse("place-capture", args=[place.pk]) not in inventory
