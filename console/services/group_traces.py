"""How many distributed traces a failure group spans, among the letters a reader may see.

Read from LetterTrace (its index on fingerprint, place and trace id), so a group's letters are
not read; a capture's letters whose trace rows are not written yet (console.services.
search_rows) are read from the letters themselves. At most TRACE_ROWS_READ rows are read: a
page costs the same for a group of a million letters, and says "at least" past them.

The count names no trace: a reader whose mask hides a letter's trace headers is not shown its
id, nor can filter by it (console.access.traces), but the number of traces tells them nothing
a mask hides, as a group's count of letters does not.
"""

from __future__ import annotations

from dataclasses import dataclass

from console.access.actors import Actor
from console.access.scope import visible
from console.models import DeadLetter, DeadPlace
from console.models.letter import LetterSearch, LetterTrace

#: Trace rows read for one group at most.
TRACE_ROWS_READ = 20_000


@dataclass(frozen=True)
class GroupTraces:
    """``count`` distinct traces (at least, unless ``exact``)."""

    count: int
    exact: bool


def group_traces(fingerprint: str, reader: Actor | None) -> GroupTraces:
    places = visible(reader, DeadPlace.objects.all()).values("id")
    rows = list(LetterTrace.objects.filter(fingerprint=fingerprint, place_id__in=places)
                .values_list("trace_id", flat=True)[:TRACE_ROWS_READ + 1])
    waiting = visible(reader, DeadLetter.objects.filter(
        id__in=LetterSearch.objects.filter(pending=True).values("letter_id"), fingerprint=fingerprint)
        .exclude(trace_id="")).values_list("trace_id", flat=True)[:TRACE_ROWS_READ]
    exact = len(rows) <= TRACE_ROWS_READ
    return GroupTraces(len(set(rows[:TRACE_ROWS_READ]) | set(waiting)), exact)
