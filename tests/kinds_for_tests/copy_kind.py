"""Copy: a kind of job that lives only in the tests, to show that a new kind is one room.

It publishes a copy of each chosen letter to the queue its ``target`` names, with its ``note``
in the copy's ``x-dlo-note`` header, and leaves the letters as they are (still held). Nothing
under console/ names it: tests/logic/test_a_new_kind_is_one_room.py registers it
(console.jobs.kinds.register) and finds it on the pages, in the API and in the audit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from django.db import transaction

from console.brokers import Outgoing
from console.jobs.control import advance, checkpoint
from console.jobs.kinds.base import SELECTION, TARGET, Ask, Params, Target
from console.jobs.kinds.letters import LettersKind
from console.jobs.kinds.pace import TARGET_QUEUE
from console.models import DeadPlace, Job
from console.services import audit
from console.services.jobs import JobError
from console.services.selection import resolve

NOTE = Ask("note", label="Note on each copy (its x-dlo-note header)", help="Set as each copy's x-dlo-note header",
           max_length=200)


@dataclass(frozen=True)
class CopyParams(Params):
    target: str = ""
    note: str = ""


class Copy(LettersKind):
    name = "copy"
    label = "Copy"
    action_label = "Copy to a queue"
    offered_on = frozenset({SELECTION})
    publishes_to = TARGET
    params: ClassVar[type[CopyParams]] = CopyParams
    asks = (TARGET_QUEUE, NOTE)

    def validate(self, params: CopyParams) -> None:
        if not params.target:
            raise JobError("a copy needs a target queue")

    def plan(self, params: CopyParams, given, *, actor, checked):
        plan = super().plan(params, given, actor=actor, checked=checked)
        plan.targets = _targets(plan.per_place, params.target)
        return plan

    def targets(self, job: Job) -> list[Target]:
        return _targets(job.per_place, CopyParams.of(job).target)

    def run(self, job: Job) -> str:
        params = CopyParams.of(job)
        letters = resolve(job.selection).filter(id__gt=job.cursor).select_related("place__broker").order_by("id")
        for letter in letters:
            checkpoint(job)
            with letter.place.broker.adapter() as adapter:
                (result,) = adapter.publish([Outgoing(letter.pk, params.target, letter.body_bytes,
                                                      {"x-dlo-note": params.note}, {}, letter.place.scope)], window=1)
            with transaction.atomic():
                audit.record("copy", actor=job.actor_name, reason=job.reason, ticket=job.ticket, job=job,
                             place=letter.place, target=params.target, letter_ids=[letter.pk],
                             outcome="confirmed" if result.ok else "refused")
                advance(job, done=int(result.ok), failed=int(not result.ok), cursor=letter.pk)
        return f"{job.done} letters copied to {params.target}, {job.failed} not confirmed"


def _targets(place_ids, name: str) -> list[Target]:
    places = DeadPlace.objects.filter(pk__in=[int(pk) for pk in place_ids])
    pairs = sorted(set(places.values_list("broker_id", "scope")))
    return [Target(broker_id, name, scope) for broker_id, scope in pairs]
