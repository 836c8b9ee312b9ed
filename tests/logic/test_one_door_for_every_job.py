"""Every kind of job is a module of console.jobs.kinds, and only console.jobs.door.requests makes job
rows: no page, API view, command, task or pipeline job requests bulk work by code of its own
(invariant 8). A new ``Job.objects.create`` anywhere else fails this test."""

from __future__ import annotations

import re
from pathlib import Path

from console.jobs.kinds import KINDS, kind
from console.models import Job

CONSOLE = Path(__file__).resolve().parents[2] / "console"
MAKES_A_JOB = re.compile(r"\bJob\.objects\.(create|bulk_create|get_or_create|update_or_create)\(|(?<!class )\bJob\(")


def test_every_kind_of_job_has_its_module_and_every_module_a_kind():
    assert set(KINDS) == {value for value, _ in Job._meta.get_field("kind").choices}
    for name in KINDS:
        assert kind(name).name == name


def test_only_the_request_door_makes_job_rows():
    makers = sorted(str(path.relative_to(CONSOLE.parent)) for path in CONSOLE.rglob("*.py")
                    if "migrations" not in path.parts and MAKES_A_JOB.search(path.read_text()))
    assert makers == ["console/jobs/door/requests.py"]
