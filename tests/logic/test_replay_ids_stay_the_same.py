"""A letter's replay id is uuid5(the console's namespace, "<job>:<letter>"), as every version
made it: a replay resumed after an upgrade publishes the ids it published before, and a
consumer that drops duplicates by them keeps dropping them."""

from __future__ import annotations

import uuid

from console.services.custody import replay_id

NAMESPACE = uuid.UUID("6f1d2a52-8c1e-4c0e-9a43-3d1f0b6c9e70")


def test_replay_ids_are_the_uuid5_of_job_and_letter():
    for job_id, letter_id in [(1, 1), (7, 123_456), (2 ** 31, 2 ** 62), (42, 0)]:
        assert replay_id(job_id, letter_id) == uuid.uuid5(NAMESPACE, f"{job_id}:{letter_id}").hex
    assert replay_id(3, 4) == "6de31526a29d5ed88682336f67051735"  # as published by earlier versions
