"""Edit and replay: the operator fixes one letter's body or headers and an edited copy is
replayed to its origin; the letter itself is kept as it was and marked failed
(console.services.edit), and the audit keeps the diff. The copy is published like any replay
(console.jobs.engines.publish)."""

from __future__ import annotations

from typing import Any, ClassVar

from console.access.actors import Actor
from console.jobs.engines.publish import Publishing, run_publish
from console.jobs.kinds.base import ORIGIN, JobKind, NoParams, Plan
from console.jobs.kinds.pace import Pace
from console.models import DeadLetter, Job
from console.services.edit import make_edited_copy, record_edit
from console.services.jobs import JobError
from console.services.selection import freeze


class EditReplay(JobKind[NoParams]):
    name = "edit_replay"
    label = "Edit and replay"
    inputs: ClassVar[frozenset[str]] = frozenset({"letter", "body", "headers"})
    publishes_to = ORIGIN
    audited_as = "replay"  # its copy is replayed like any letter

    def plan(self, params: NoParams, given: dict[str, Any], *, actor: Actor, checked: Any) -> Plan:
        letter, body, headers = given.get("letter"), given.get("body"), given.get("headers")
        if not isinstance(letter, DeadLetter) or not isinstance(body, bytes):
            raise JobError("an edit and replay needs a letter and its edited body")
        before = letter.body_bytes
        original, copy = make_edited_copy(letter, body=body, headers=letter.headers if headers is None else headers)
        return Plan(per_place={original.place_id: 1}, selection=freeze(ids=[copy.pk]),
                    made=(original, copy, before))

    def requested(self, job: Job, plan: Plan, *, actor: Actor) -> None:
        original, copy, before = plan.made
        record_edit(job, original, copy, before_body=before, actor=actor)
        # The edited letter's page names the job that replays its copy as its last job.
        original.last_job = job
        original.save(update_fields=["last_job"])

    def run(self, job: Job) -> str:
        return run_publish(job, Pace(), Publishing(self.audited_as))
