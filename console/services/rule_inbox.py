"""The inbox of letters the rules are to decide (console.models.RuleInbox), so that a round of
the rules (console.jobs.automation.rules_at_work) costs what is new or due, not what is held: each letter is
decided once per rule set, and again only when something that can change its decision happens.

A letter is put in, always in the transaction of the change that puts it:

- when it arrives ``held`` (capture, by any path: a statement trigger, migration 0034);
- when it becomes open again: its state goes back to ``held`` (trigger), a rule's job over it
  finishes with it still held (trigger), a person releases it from quarantine or closes its
  origin's breaker (console.services.safeguards);
- when a change of the rule set may decide it otherwise (console.services.rules.redeciding);
- for later: a ladder's next try, or the age a rule waits for (``older_than_seconds``), is put
  with its time (the round, console.services.rules.redeciding).

A put of a letter already in keeps the earlier time and takes a new ``seq``. A round takes a
bounded batch of the due rows (one probe of the ``due_at`` index: with nothing due that is the
whole round) and, once it has acted, removes the rows it took (:func:`done`) by ``seq``: a row
put again meanwhile stays and is decided again. A round killed before :func:`done` leaves its
rows, and the next takes them again: what it had acted on is no longer open then.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.db.models import QuerySet
from django.utils import timezone

from console.models import DeadLetter, LetterState, Origin, RuleInbox

#: How many letters a round decides at a time.
BATCH = 5000
#: A round takes batches while it has been running less than this (seconds), so a flood of new
#: letters is decided in a few rounds without one round running past the next.
ROUND_SECONDS = 5.0
#: A letter a rule decided to act on but could not (the check step refused it, the broker was
#: away) is looked at again this many seconds later, not every round.
RETRY_SECONDS = 60

_TABLE = RuleInbox._meta.db_table
_UPSERT = (f"ON CONFLICT (letter_id) DO UPDATE SET due_at = LEAST({_TABLE}.due_at, EXCLUDED.due_at), "
           "seq = EXCLUDED.seq")


@dataclass(frozen=True)
class Taken:
    """A row a round took: its letter and the ``seq`` it had."""

    letter_id: int
    seq: int


def take(now: datetime, limit: int = BATCH) -> list[Taken]:
    """The due rows, earliest first, at most ``limit``."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT letter_id, seq FROM {_TABLE} WHERE due_at <= %s ORDER BY due_at LIMIT %s",
                       [now, limit])
        return [Taken(letter_id, seq) for letter_id, seq in cursor.fetchall()]


def done(taken: Iterable[Taken]) -> None:
    """Remove the rows a round took and decided, unless they were put again since."""
    taken = list(taken)
    if not taken:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {_TABLE} AS i USING unnest(%s::bigint[], %s::bigint[]) AS t (letter_id, seq) "
            "WHERE (i.letter_id, i.seq) = (t.letter_id, t.seq)",
            [[t.letter_id for t in taken], [t.seq for t in taken]])


def put(letter_ids: Iterable[int], at: datetime | None = None) -> None:
    """Put letters in, due ``at`` (now by default)."""
    at = at or timezone.now()
    put_at({letter_id: at for letter_id in letter_ids})


def put_at(due: dict[int, datetime]) -> None:
    """Put each letter in, due at its own time."""
    if not due:
        return
    ids = list(due)
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {_TABLE} (letter_id, due_at) "
                       f"SELECT * FROM unnest(%s::bigint[], %s::timestamptz[]) {_UPSERT}", [ids, [due[i] for i in ids]])


def put_after_capture(letters: QuerySet[DeadLetter], seconds: int | None = None) -> None:
    """Put ``letters`` in, in one statement (their ids never come into Python), each due
    ``seconds`` after its capture, or now if that is past (or no ``seconds``)."""
    inner, params = letters.values("id").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {_TABLE} (letter_id, due_at) "
            f"SELECT d.id, GREATEST(%s, d.captured_at + make_interval(secs => %s)) "
            f"FROM {DeadLetter._meta.db_table} AS d WHERE d.id IN ({inner}) {_UPSERT}",
            [timezone.now(), seconds or 0, *params])


def put_origin(origin: Origin) -> None:
    """Put in the held letters of ``origin`` (its breaker closed: rules may replay them again)."""
    put_after_capture(DeadLetter.objects.filter(broker_id=origin.broker_id, place__scope=origin.scope,
                                                origin_queue=origin.name, state=LetterState.HELD))
