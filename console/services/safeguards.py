"""What stops automation from replaying a letter: the replay-loop quarantine (a letter whose
lineage came back too often) and the breaker of its origin (too many failures in a row).
Rules (console.rules) replay and forward only the letters these let through; a person may
still act on any letter. A release or a closed breaker puts the letters it frees into the rules'
inbox (console.services.rule_inbox), in its transaction, so the rules decide them again.

Both are decided at capture, inside the batch's transaction (console.services.custody), with a
fixed number of set-based statements per batch, never one per letter:

- **Quarantine** (SAP's NDLV): a return whose ``replay_count`` (its lineage's replays that came
  back) reaches ``DLO_QUARANTINE_AFTER`` (2) is stored quarantined. A person releases it
  (``do_release``) or marks it failed (an ordinary mark_failed job).
- **Breaker** (seed 001): per origin, the letters arriving from it in order make a streak. The
  console sees only failures, never the successes between them, so "in a row" means "without
  a quiet gap": a letter that failed more than ``DLO_BREAKER_RESET_SECONDS`` (600) after the
  previous one from the same origin starts a new streak, as a consumer that went that long
  without a failure was most likely working. A person closing the breaker (``do_close_breaker``)
  also starts it afresh. ``DLO_BREAKER_SAME`` (3) letters in a row with the same exception
  type, or ``DLO_BREAKER_ANY`` (10) with any, open it. A letter without an exception type
  counts towards ``any`` and ends a same-exception run (it is no evidence of the same fault).
  A letter's time is its failure time when the broker told it, else its capture time. A letter
  without an origin counts towards no streak; an open breaker keeps counting (the page shows
  how bad it got) but opens only once.
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Exists, OuterRef, Q, QuerySet

from console.access.actors import Actor
from console.access.roles import MANAGE_BROKERS, has
from console.models import DeadLetter, DeadPlace, LetterState, Origin
from console.notifications.events import notify
from console.refusals import Forbidden, Refusal, require_reason
from console.services import audit, rule_inbox
from console.wording import counted

#: The actor of what the console decides by itself.
SYSTEM_ACTOR = "system:safeguards"


class SafeguardError(Refusal):
    """A release or a close that cannot be done (nothing to release, no reason given)."""


def rules_may_replay(letters: QuerySet[DeadLetter]) -> QuerySet[DeadLetter]:
    """``letters`` without the quarantined ones and those whose origin's breaker is open."""
    return letters.exclude(held_back_from_rules())


#: Up to this many open breakers are named in :func:`held_back_from_rules`; past it, each letter
#: looks its origin up.
NAMED_BREAKERS = 50


def held_back_from_rules() -> Q:
    """A letter no rule replays or forwards: quarantined, or its origin's breaker is open (never
    NULL, so it may be negated). The open breakers are read when the condition is made (few: a
    breaker opens on a replay loop), so a pass over a million letters (a dry run) compares each
    with a short list instead of looking its origin up."""
    held = Q(quarantined_at__isnull=False)
    opened = Origin.objects.filter(breaker_opened_at__isnull=False)
    named = list(opened.values_list("broker_id", "scope", "name")[:NAMED_BREAKERS + 1])
    if len(named) > NAMED_BREAKERS:
        return held | Q(Exists(opened.filter(broker_id=OuterRef("broker_id"), scope=OuterRef("place__scope"),
                                             name=OuterRef("origin_queue"))))
    for broker_id, scope, name in named:
        held |= Q(broker_id=broker_id, place__scope=scope, origin_queue=name)
    return held


# -- settings --------------------------------------------------------------------------------

def quarantine_after() -> int:
    return settings.DLO_QUARANTINE_AFTER


def _breaker_same() -> int:
    return settings.DLO_BREAKER_SAME


def _breaker_any() -> int:
    return settings.DLO_BREAKER_ANY


def _reset_after() -> timedelta:
    return timedelta(seconds=settings.DLO_BREAKER_RESET_SECONDS)


# -- at capture ------------------------------------------------------------------------------

def quarantine_words(replay_count: int) -> str:
    return (f"came back {replay_count} times after replays (quarantined from {quarantine_after()}): "
            "a replay loop; no rule replays it until a person releases it")


def mark_returns(rows: Sequence[dict[str, Any]], parent_counts: dict[int, int], now: datetime, *,
                 on_ladder: Set[int] = frozenset()) -> None:
    """Fill the ``replay_count`` of new letters linked to a parent, and quarantine those whose
    lineage came back often enough (rows as custody writes them, parents already linked).

    A return of a try of a rule's retry ladder (``on_ladder``: its parent was replayed as one)
    is not quarantined: the ladder planned it, counts it, and says what follows when it runs
    out. Quarantine stops loops nobody planned."""
    limit = quarantine_after()
    for row in rows:
        parent = row.get("parent_id")
        if parent is None or parent not in parent_counts:
            continue
        row["replay_count"] = parent_counts[parent] + 1
        if row["replay_count"] >= limit and parent not in on_ladder:
            row["quarantined_at"] = now
            row["quarantine_reason"] = quarantine_words(row["replay_count"])


def audit_quarantined(place: DeadPlace, rows: Sequence[dict[str, Any]], ids: Sequence[int]) -> None:
    quarantined = [letter_id for row, letter_id in zip(rows, ids, strict=True) if row.get("quarantined_at")]
    if quarantined:
        audit.record("quarantine", actor=SYSTEM_ACTOR, place=place, letter_ids=quarantined, outcome="quarantined",
                     reason=f"came back {quarantine_after()} or more times after replays",
                     details={"quarantine_after": quarantine_after()})
        notify("letter.quarantined", key=f"quarantine:{place.pk}", place=place,
               subject=f"{counted(len(quarantined), 'letter')} of {place} quarantined: they came back "
                       f"{quarantine_after()} or more times after replays",
               details={"letters": quarantined})


@dataclass
class _Streak:
    exception: str = ""
    same: int = 0
    any: int = 0
    last: datetime | None = None
    opened_at: datetime | None = None
    reason: str = ""

    def add(self, exception: str, at: datetime, reset_after: timedelta) -> None:
        if self.last is not None and at - self.last > reset_after:
            self.exception, self.same, self.any = "", 0, 0
        self.any += 1
        if exception and exception == self.exception:
            self.same += 1
        else:
            self.exception, self.same = exception, 1 if exception else 0
        self.last = at if self.last is None else max(self.last, at)

    def trips(self, same: int, any_: int) -> str:
        """Why this streak opens the breaker, or "" while it does not."""
        if self.exception and self.same >= same:
            return f"{counted(self.same, 'letter')} in a row failed with {self.exception} (opens at {same})"
        if self.any >= any_:
            return f"{counted(self.any, 'letter')} in a row failed (opens at {any_} with any exception)"
        return ""


def note_arrivals_of_places(arrived: Sequence[tuple[DeadPlace, Sequence[dict[str, Any]], Sequence[int]]],
                            now: datetime, *, on_ladder: Set[int] = frozenset()) -> None:
    """Add stored batches' letters (each place's in arrival order) to their origins' streaks,
    and open the breakers they trip: one locking read and one upsert for the places of a broker
    and scope (an origin is a broker's, in a scope; the first place its letters came from is
    named when its breaker opens).

    A return of a try of a rule's retry ladder (its parent in ``on_ladder``) adds nothing: one
    message failing again as its ladder planned is that message's business (the ladder counts
    it), not a sign that its consumer is broken."""
    by_scope: dict[tuple[int, str], dict[str, tuple[DeadPlace, list[tuple[str, datetime, int]]]]] = {}
    for place, rows, ids in arrived:
        arrivals = by_scope.setdefault((place.broker_id, place.scope), {})
        for row, letter_id in zip(rows, ids, strict=True):
            if row["origin_queue"] and row.get("parent_id") not in on_ladder:
                arrivals.setdefault(row["origin_queue"], (place, []))[1].append(
                    (row["exception_type"], row["last_failed_at"] or now, letter_id))
    for (broker_id, scope), arrivals in sorted(by_scope.items()):
        if arrivals:
            _note_origins(broker_id, scope, arrivals, now)


def _note_origins(broker_id: int, scope: str,
                  arrivals: dict[str, tuple[DeadPlace, list[tuple[str, datetime, int]]]], now: datetime) -> None:
    # Rows locked in id order, so two captures touching the same origins cannot deadlock. Two
    # captures seeing a brand-new origin at the same instant: the later upsert's streak wins.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT name, streak_exception, streak_same, streak_any, last_arrival_at, breaker_opened_at, "
            f"breaker_reason FROM {Origin._meta.db_table} WHERE broker_id = %s AND scope = %s AND name = ANY(%s) "
            "ORDER BY id FOR UPDATE", [broker_id, scope, list(arrivals)])
        known = {name: _Streak(*streak) for name, *streak in cursor.fetchall()}
    same, any_, reset_after = _breaker_same(), _breaker_any(), _reset_after()
    streaks: dict[str, _Streak] = {}
    opened: list[tuple[DeadPlace, str, _Streak, list[int]]] = []
    for name, (place, letters) in arrivals.items():
        streak = known.get(name) or _Streak()
        for exception, at, _ in letters:
            streak.add(exception, at, reset_after)
            if streak.opened_at is None and (why := streak.trips(same, any_)):
                streak.opened_at, streak.reason = now, why
                opened.append((place, name, streak, [letter_id for *_, letter_id in letters]))
        streaks[name] = streak
    _upsert(broker_id, scope, streaks)
    for place, name, streak, letter_ids in opened:
        audit.record("breaker_open", actor=SYSTEM_ACTOR, place=place, target=name, letter_ids=letter_ids,
                     reason=streak.reason, outcome="opened",
                     details={"origin": name, "exception": streak.exception, "same": streak.same, "any": streak.any})
        notify("breaker.opened", key=f"breaker:{place.broker_id}:{name}", place=place,
               subject=f"the breaker of {name} opened: {streak.reason}",
               details={"origin": name, "exception": streak.exception, "same": streak.same, "any": streak.any})


def _upsert(broker_id: int, scope: str, streaks: dict[str, _Streak]) -> None:
    names = sorted(streaks)  # new origins inserted in one order by every capture: no deadlock between two
    values = [streaks[n] for n in names]
    table = Origin._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (broker_id, scope, name, streak_exception, streak_same, streak_any, "
            "last_arrival_at, breaker_opened_at, breaker_reason) "
            "SELECT %s, %s, * FROM unnest(%s::varchar[], %s::varchar[], %s::int[], %s::int[], "
            "%s::timestamptz[], %s::timestamptz[], %s::varchar[]) "
            "ON CONFLICT (broker_id, scope, name) DO UPDATE SET streak_exception = EXCLUDED.streak_exception, "
            "streak_same = EXCLUDED.streak_same, streak_any = EXCLUDED.streak_any, "
            "last_arrival_at = EXCLUDED.last_arrival_at, breaker_opened_at = EXCLUDED.breaker_opened_at, "
            "breaker_reason = EXCLUDED.breaker_reason",
            [broker_id, scope, names, [s.exception[:500] for s in values], [s.same for s in values],
             [s.any for s in values], [s.last for s in values], [s.opened_at for s in values],
             [s.reason[:500] for s in values]],
        )


# -- a person's decisions --------------------------------------------------------------------

@transaction.atomic
def do_release(letter: DeadLetter, *, actor: Actor, reason: str) -> DeadLetter:
    """Release a quarantined letter: rules may replay it again."""
    reason = require_reason(reason, SafeguardError, "to release a letter")
    letter = DeadLetter.objects.select_for_update().select_related("place__broker").get(pk=letter.pk)
    if letter.quarantined_at is None:
        raise SafeguardError(f"Letter {letter.pk} is not quarantined.")
    if (letter.envelope_details.get("imported") or {}).get("masked") is True and not has(actor, MANAGE_BROKERS):
        raise Forbidden(f"Letter {letter.pk} was imported masked: only an admin confirms it may be published.")
    was = letter.quarantine_reason
    letter.quarantined_at, letter.quarantine_reason = None, ""
    letter.save(update_fields=["quarantined_at", "quarantine_reason"])
    if letter.state == LetterState.HELD:
        rule_inbox.put([letter.pk])  # the rules decide it again
    audit.record("release", actor=actor, reason=reason, place=letter.place, letter_ids=[letter.pk],
                 outcome="released", details={"was": was, "replay_count": letter.replay_count})
    return letter


@transaction.atomic
def do_close_breaker(origin: Origin, *, actor: Actor, reason: str) -> Origin:
    """Close an origin's open breaker; its streak starts afresh, so rules may replay to it again."""
    reason = require_reason(reason, SafeguardError, "to close a breaker")
    origin = Origin.objects.select_for_update().select_related("broker").get(pk=origin.pk)
    if origin.breaker_opened_at is None:
        raise SafeguardError(f"The breaker of {origin} is not open.")
    was = {"opened_at": origin.breaker_opened_at.isoformat(), "why": origin.breaker_reason,
           "exception": origin.streak_exception, "same": origin.streak_same, "any": origin.streak_any}
    origin.breaker_opened_at, origin.breaker_reason = None, ""
    origin.streak_exception, origin.streak_same, origin.streak_any = "", 0, 0
    origin.save(update_fields=["breaker_opened_at", "breaker_reason", "streak_exception", "streak_same",
                               "streak_any"])
    rule_inbox.put_origin(origin)  # the rules decide its held letters again
    audit.record("breaker_close", actor=actor, reason=reason, broker=origin.broker, target=origin.name,
                 outcome="closed", details={"origin": origin.name, "scope": origin.scope, "was": was})
    return origin
