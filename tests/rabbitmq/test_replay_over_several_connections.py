"""Concurrency: a replay publishing over several connections at once still delivers every
letter to its origin queue exactly once, with its replay id."""

from __future__ import annotations

import pytest

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import DeadLetter, LetterState

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db(transaction=True)]


def test_three_connections_deliver_each_letter_once(captured, kit, operator, settings):
    settings.DLO_BATCH_SIZE = 50  # several batches, each split three ways
    work, place, letters = captured("fanned", [(f"order {n}".encode(), {"n": n}) for n in range(300)])
    job = request_job("replay", actor=operator, reason="redeploy", filter={"place": str(place.pk)}, concurrency=3)
    assert run_job(job.pk) == "succeeded"

    delivered = kit.drain(work)
    assert sorted(message.body for message in delivered) == sorted(letter.body_bytes for letter in letters)
    replay_ids = {letter.id: letter.replay_id for letter in DeadLetter.objects.filter(place=place)}
    by_body = {letter.body_bytes: letter.id for letter in letters}
    assert all(message.headers["x-dlo-replay-id"] == replay_ids[by_body[message.body]] for message in delivered)
    assert DeadLetter.objects.filter(place=place, state=LetterState.REPLAYED).count() == 300
