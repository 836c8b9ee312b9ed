"""Jobs that change only custody: purge (erase the body, keep a tombstone) and mark failed."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.db import transaction
from django.utils import timezone

from console.jobs.control import advance, checkpoint
from console.models import DeadLetter, DeadPlace, Job
from console.services import audit
from console.services.flights import in_flight
from console.services.selection import resolve
from console.wording import counted

CHUNK = 2000


def run_local(job: Job, from_states: tuple[str, ...], to_state: str, extra: dict[str, Any]) -> str:
    """Move the job's letters that are in ``from_states`` to ``to_state`` (changing ``extra``
    fields too), a chunk per transaction with one audit row per place."""
    letters = resolve(job.selection).order_by("id")
    while True:
        checkpoint(job)
        with transaction.atomic():
            chunk = list(letters.filter(id__gt=job.cursor).values_list("id", "state")[:CHUNK])
            if not chunk:
                break
            candidates = [i for i, state in chunk if state in from_states]
            locked = list(DeadLetter.objects.select_for_update().filter(id__in=candidates, state__in=from_states)
                          .values_list("id", "place_id"))
            flying = in_flight(letter_id for letter_id, _ in locked)  # a replay has them
            by_place: dict[int, list[int]] = defaultdict(list)
            for letter_id, place_id in locked:
                if letter_id not in flying:
                    by_place[place_id].append(letter_id)
            ids = [i for place_ids in by_place.values() for i in place_ids]
            DeadLetter.objects.filter(id__in=ids).update(
                state=to_state, state_changed_at=timezone.now(), last_job=job, **extra
            )
            places = DeadPlace.objects.select_related("broker").in_bulk(list(by_place))
            for place_id, place_ids in by_place.items():
                audit.record(job.kind, actor=job.actor_name, reason=job.reason, ticket=job.ticket,
                             job=job, place=places[place_id], letter_ids=place_ids, outcome=to_state)
            advance(job, done=len(ids), skipped=len(chunk) - len(ids), cursor=chunk[-1][0])
    return (f"{job.kind}: {counted(job.done, 'letter')} {to_state}, {job.skipped} skipped "
            "(not in a state it applies to, or being replayed)")
