"""Each adapter declares what it can do; the API reports exactly that and the pages offer only
those actions. Browsing a place on its broker is offered only where it changes nothing, and a
browse asked for anyway (RabbitMQ) is refused without touching a message."""

from __future__ import annotations

from django.urls import reverse

from console.brokers.registry import adapter_class
from tests.contract.conftest import BODIES
from tests.flow import capture

EXPECTED_FLAGS = {"peek", "move", "server_side_move"}


def test_capabilities_are_declared_and_the_pages_offer_only_those(harness, broker, dead, client):
    declared = adapter_class(harness.kind).capabilities()
    assert set(declared) >= EXPECTED_FLAGS and all(isinstance(v, bool) for v in declared.values())
    assert declared["peek"] is adapter_class(harness.kind).can_peek_safely
    client.force_login(harness.operator)

    assert client.get(reverse("api-broker", args=[broker.pk])).json()["capabilities"] == declared

    broker_page = client.get(reverse("broker", args=[broker.pk])).content.decode()
    peek_url = reverse("place-peek", args=[broker.pk, dead.pk])
    assert (peek_url in broker_page) is declared["peek"]
    assert ("Browse on broker" in broker_page) is declared["peek"]

    before = harness.dead_state()
    peeked = client.get(peek_url).content.decode()
    if declared["peek"]:
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in peeked and "<script>alert(1)" not in peeked
        assert '{"order": 1}' in peeked.replace("&quot;", '"')
    else:
        assert "cannot browse without changing messages" in peeked
    assert harness.dead_state() == before
    assert harness.dead_count() == len(BODIES)

    capture(dead, harness.operator)  # the place page offers actions on letters in custody
    place_page = client.get(reverse("place", args=[dead.pk])).content.decode()
    assert ('<option value="move"' in place_page) is declared["move"]
    assert '<option value="replay"' in place_page
    # Moving the whole queue on the broker (RabbitMQ's shovel) only where the broker can.
    assert (reverse("place-shovel", args=[dead.pk]) in place_page) is declared["server_side_move"]
    assert ("Move the whole queue on the broker" in place_page) is declared["server_side_move"]
