"""Discovery finds the dead place a real failing consumer filled, names its origin, and the
place's depth (from discovery and from stats) is the number of letters in it."""

from __future__ import annotations

from console.models import DeadPlace
from tests.contract.conftest import BODIES


def test_discover_finds_the_dead_place_and_names_its_origin(harness, dead):
    assert harness.origin in dead.origins
    assert DeadPlace.objects.get(pk=dead.pk).gone is False


def test_the_count_is_the_number_of_dead_letters(harness, broker, dead):
    assert dead.depth == len(BODIES) == harness.dead_count()
    with broker.adapter() as adapter:
        assert adapter.stats(dead.ref).depth == len(BODIES)
