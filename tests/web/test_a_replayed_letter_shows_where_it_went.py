"""A replayed letter's page says where the replay sent it: its origin queue for a replay, the
chosen queue for a move (the destination was recorded for moves only, so every replayed letter
read "replayed to —")."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import DeadLetter
from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db


def _last_replay(client, letter) -> str:
    html = client.get(reverse("letter", args=[letter.pk])).content.decode()
    return re.search(r"<dt>Last replay</dt><dd>(.*?)</dd>", html, re.S).group(1)


def test_a_replayed_letter_names_its_origin_queue(signed_in, operator, place, memory_broker):
    fake, _ = memory_broker
    letter = store_letter(place, b'{"order": 1}', origin="orders")
    job = request_job("replay", actor=operator, reason="fixed", ids=[letter.pk])
    assert run_job(job.pk) == "succeeded"
    assert len(fake.queue("orders")) == 1

    assert DeadLetter.objects.get(pk=letter.pk).replayed_to == "orders"
    shown = _last_replay(signed_in, letter)
    assert " to orders at " in shown and "—" not in shown


def test_a_moved_letter_names_the_chosen_queue(signed_in, operator, place, memory_broker):
    fake, _ = memory_broker
    fake.queue("parking")
    letter = store_letter(place, b'{"order": 2}', origin="orders")
    job = request_job("move", actor=operator, reason="park it", ids=[letter.pk], target="parking")
    assert run_job(job.pk) == "succeeded"

    assert " to parking at " in _last_replay(signed_in, letter)
