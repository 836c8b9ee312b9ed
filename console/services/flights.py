"""Letters in flight: taken by a replay or a move and perhaps handed to the broker, their
outcome not recorded yet (console.models.LetterFlight). Their rows stay ``held``; what shows
and filters a letter's state reads them as ``replaying``, and what changes a held letter
(a purge, a mark-failed, an edit) leaves them alone.

A change that would act on held letters locks their rows first, then asks :func:`in_flight`:
a take (console.jobs.engines.publish) locks the rows it takes in the same transaction as it
writes their flights, so once the lock is had, the flights are there to be seen.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Exists, OuterRef, Q

from console.models import DeadLetter, LetterFlight, LetterState


def in_flight(letter_ids: Iterable[int]) -> set[int]:
    """Which of these letters are in flight (ask after locking them)."""
    return set(LetterFlight.objects.filter(letter_id__in=list(letter_ids)).values_list("letter_id", flat=True))


def states_condition(states: Iterable[str]) -> Q:
    """Letters in any of ``states``, ``replaying`` meaning in flight."""
    wanted = set(states)
    condition = Q(state__in=sorted(wanted - {LetterState.REPLAYING}))
    if LetterState.REPLAYING in wanted:
        condition |= Q(flying())
    return condition


def flying() -> Exists:
    """Whether a letter is in flight, to annotate a list of letters with (``in_flight``), which
    :func:`shown_state` then reads instead of asking once per letter."""
    return Exists(LetterFlight.objects.filter(letter_id=OuterRef("pk")))


def shown_state(letter: DeadLetter) -> str:
    """The letter's state as a person reads it: ``replaying`` while it is in flight."""
    if letter.state != LetterState.HELD:
        return letter.state
    known = getattr(letter, "in_flight", None)
    in_the_air = LetterFlight.objects.filter(letter_id=letter.pk).exists() if known is None else known
    return LetterState.REPLAYING if in_the_air else letter.state
