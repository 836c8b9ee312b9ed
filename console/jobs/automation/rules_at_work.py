"""Rules at work: every DLO_RULES_SECONDS (Celery beat's ``console.apply_rules``) the enabled
rules are applied, in order, first match wins, to the held letters that are new or due
(console.services.rules.decide). Every action is a job asked for through the one door
(console.jobs.door.requests.request_job) by the rule itself, ``rule:<name>@v<version>``
(console.access.actors.RuleActor): with the rights of whoever enabled it, taking letters of their
scope narrowed to the rule's and publishing where they may, and a rate limit
(DLO_RULE_RATE_LIMIT letters a second) on what it publishes.

Each letter is decided once per rule set, not every round (design invariant 12): a round takes
a batch of due letters from the rules' inbox (console.services.rule_inbox), decides those still
open, acts, and removes what it took, so its cost follows what is new or due, not what is held;
with nothing due it is one index probe. A letter is put in the inbox when it arrives held, when
it becomes open again (back to held, released, its breaker closed, its rule's job finished),
when a change of the rule set may decide it otherwise (console.services.rules.redeciding: the
letters the changed rule matches, as it was and as it is, and those it had decided), and for
later: a ladder's next try, a letter a rule decided to act on but could not (in a minute), the
moment a letter is old enough for a rule's ``older_than_seconds``. Each put is in the
transaction of the change that makes it. A round killed midway leaves its rows in the inbox;
the next takes them again, and what was acted on is no longer open by then.

A retry's try is due its step's delay after the letter was captured (i.e. after it died this
time); one not yet due is noted (``LetterHandling.next_at``) and looked at again then. Each
replay counts one try on the letter; a letter that dies again comes back as a new letter and
takes the count on. A ladder that ran out says so on the letter and the audit, then does what
its ``then`` says: the next matching rule, hold, or mark failed. "hold" leaves the letter to a
person: no rule acts on it again. Quarantined letters and origins whose breaker is open are
never replayed or forwarded (console.services.safeguards).

Before asking for a job, a round runs the check step its dry run reports
(console.services.rules.checks): the enabler's right, the letters' places, where it publishes
(its enabler's right, as the broker's topology confirms). Refused letters stay held; a rule that
cannot do what it decided says so (``last_error``, one ``rule.failed`` notification until it
acts again: console.services.rules.failing).
"""

from __future__ import annotations

import json
import logging
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models.expressions import RawSQL
from django.utils import timezone

from console.access.actors import RuleActor
from console.jobs.door.requests import request_job
from console.models import DeadLetter, DeadPlace, Job, LetterHandling, Rule
from console.notifications.events import notify
from console.services import audit, rule_inbox, view_subscriptions
from console.services.jobs import JobError
from console.services.rules import Decision, decide, describe_action, enabled_rules, lineage_of, open_letters
from console.services.rules.checks import JOB_KINDS, check, rule_actor
from console.services.rules.failing import rule_failed, rule_recovered
from console.services.rules.redeciding import schedule_ages
from console.services.search_rows import write_decoded_documents
from console.tracing import telemetry
from console.wording import counted

log = logging.getLogger(__name__)

#: The advisory lock one round of the rules holds.
ROUND_LOCK = 0x52554C45  # "RULE"


def actor_of(rule: Rule) -> RuleActor:
    return rule_actor(rule)


def apply_rules() -> dict[str, int]:
    """One round of every enabled rule; per rule, how many letters it acted on now. Rounds never
    overlap (a PostgreSQL advisory lock): a round still running when the next is due (or one
    in another worker) makes that one skip, so no letter is asked for twice."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [ROUND_LOCK])
        if not cursor.fetchone()[0]:
            return {}
    try:
        with telemetry.span("rules round") as span:
            acted = _round()
            # Counts only: a rule's name is text people typed, as maskable as any.
            span.set_attributes({"dlo.rules.acting": len(acted), "dlo.rules.letters": sum(acted.values())})
            return acted
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [ROUND_LOCK])


def _round() -> dict[str, int]:
    """Batches of the inbox's due letters, until none is due or the round has run its time."""
    acted: dict[str, int] = {}
    started = time.monotonic()
    while taken := rule_inbox.take(timezone.now()):
        for name, count in _batch(taken).items():
            acted[name] = acted.get(name, 0) + count
        if len(taken) < rule_inbox.BATCH or time.monotonic() - started > rule_inbox.ROUND_SECONDS:
            break
    return acted


def _batch(taken: list[rule_inbox.Taken]) -> dict[str, int]:
    """Decide the letters taken from the inbox that are still open, act, then take them out of
    it; letters the rules will look at later are put back with their time."""
    # New letters, decided once: matched here against the saved views people subscribe to. A
    # failure there is logged and leaves the rules to do their work.
    try:
        with transaction.atomic():
            view_subscriptions.match_new_letters(t.letter_id for t in taken)
    except Exception:  # noqa: BLE001 - the rules' round goes on without the views' news
        log.exception("matching new letters against the subscribed views failed")
    rules = enabled_rules()
    now = timezone.now()
    letters = open_letters().filter(id__in=RawSQL("SELECT unnest(%s::bigint[])", [[t.letter_id for t in taken]]))
    if not rules:
        with transaction.atomic():
            rule_inbox.done(taken)
        return {}
    if any("body_path" in json.dumps(rule.match) for rule in rules):
        write_decoded_documents(letters)  # a capture's Protobuf, MessagePack... bodies, for body paths
    groups: dict[tuple[int, str], list[Decision]] = defaultdict(list)
    later: list[Decision] = []
    ran_out: dict[tuple[int, str], list[Decision]] = defaultdict(list)
    for decision in decide(rules, letters):
        if decision.ran_out:
            ran_out[(decision.rule.pk, decision.what)].append(decision)
        if decision.what in ("next_rule", "blocked"):
            continue
        if decision.what == "retry" and decision.due_at > now:
            later.append(decision)
            continue
        groups[(decision.rule.pk, decision.what)].append(decision)
    rules_by_id = {rule.pk: rule for rule in rules}
    for (rule_id, then), decisions in ran_out.items():
        _ran_out(rules_by_id[rule_id], then, decisions)
    acted: dict[str, int] = {}
    for (rule_id, what), decisions in groups.items():
        rule = rules_by_id[rule_id]
        done = _act(rule, what, decisions)
        if done:
            acted[str(rule)] = acted.get(str(rule), 0) + done
    with transaction.atomic():
        rule_inbox.done(taken)
        if later:
            _record(later, lambda d: {"next_at": d.due_at, "tries": d.tries_done})
        # Put back for later: a ladder's next try; a letter a rule decided to act on but could
        # not (refused, broker away), in a while; a letter a rule waits for to be old enough.
        rule_inbox.put_at({d.letter_id: d.due_at for d in later})
        unacted = [d.letter_id for decisions in groups.values() for d in decisions]
        rule_inbox.put(letters.filter(id__in=unacted).values_list("id", flat=True),
                       timezone.now() + timedelta(seconds=rule_inbox.RETRY_SECONDS))
        schedule_ages(rules, letters)
    return acted


def _act(rule: Rule, what: str, decisions: list[Decision]) -> int:
    """Do one action of one rule over its letters, as jobs (or, for "hold", by noting it), for
    the letters the check step lets through; how many letters it acted on."""
    actor = actor_of(rule)
    words = describe_action(rule.action) if what == rule.action["kind"] else what.replace("_", " ")
    reason = f"rule {rule.name!r} v{rule.version}: {words}"
    checked = check(rule, what, decisions, actor=actor)
    failures = [f"{counted(len(refused.letter_ids), 'letter')} refused: {refused.reason}"
                for refused in checked.failures()]
    by_id = {decision.letter_id: decision for decision in decisions}
    done = 0
    for batch in checked.batches:
        mine = [by_id[letter_id] for letter_id in batch]
        try:
            with transaction.atomic():
                if what == "hold":
                    audit.record("rule.hold", actor=actor, reason=reason, letter_ids=batch, count=len(batch),
                                 details={"rule": rule.pk, "version": rule.version})
                    _record(mine, lambda d: {"held": True, "note": f"held for a person by rule {rule.name!r} "
                                                                   f"v{rule.version}"})
                else:
                    job = request_job(JOB_KINDS[what], actor=actor, reason=reason, ids=batch, **_pace(rule, what))
                    _record(mine, _handed_to(job, retry=what == "retry"))
        except JobError as exc:
            failures.append(str(exc))
            continue
        done += len(batch)
    if failures:
        log.warning("%s: %s", actor, "; ".join(failures))
        rule_failed(rule, "; ".join(failures))
    elif done and rule.last_error:
        rule_recovered(rule)
    return done


def _pace(rule: Rule, what: str) -> dict[str, Any]:
    if what == "forward":
        return {"target": rule.action["target"], "rate_limit": settings.DLO_RULE_RATE_LIMIT}
    if what == "retry":
        return {"rate_limit": settings.DLO_RULE_RATE_LIMIT}
    return {}


def _ran_out(rule: Rule, then: str, decisions: list[Decision]) -> None:
    """Say on each letter, and in the audit, that the rule's ladder ran out, and what follows."""
    follows = {"next_rule": "the next matching rule", "hold": "held for a person", "mark_failed": "marked failed"}
    tries = decisions[0].tries_done
    note = f"the ladder of rule {rule.name!r} v{rule.version} ran out after {tries} tries; then {follows[then]}"
    with transaction.atomic():
        audit.record("rule.ladder_ran_out", actor=actor_of(rule), reason=note,
                     letter_ids=[d.letter_id for d in decisions], count=len(decisions),
                     details={"rule": rule.pk, "version": rule.version, "then": then})
        _record(decisions, lambda d: {"note": note, "ran_out": [rule.pk]}, act=False)
        places = set(DeadLetter.objects.filter(pk__in=[d.letter_id for d in decisions]).values_list("place", flat=True))
        notify("rule.ladder_ran_out", key=f"rule:{rule.pk}:ran_out", subject=note,
               place=DeadPlace.objects.select_related("broker").get(pk=places.pop()) if len(places) == 1 else None,
               details={"rule": rule.name, "version": rule.version, "letters": [d.letter_id for d in decisions]})


def _handed_to(job: Job, *, retry: bool) -> Callable[[Decision], dict[str, Any]]:
    """What a letter's handling records once a job of its rule takes it (a retry counts a try)."""
    return lambda d: {"job": job, "next_at": None, **({"tries": d.tries_done + 1} if retry else {})}


def _record(decisions: list[Decision], fields: Callable[[Decision], dict[str, Any]], *, act: bool = True) -> None:
    """Write what a rule did (or will do) on each letter's handling, in the caller's transaction;
    a letter's first row takes on its lineage's tries and ran-out rules."""
    ids = [d.letter_id for d in decisions]
    rows = {row.letter_id: row for row in LetterHandling.objects.select_for_update().filter(letter_id__in=ids)}
    lineage = lineage_of(set(ids) - set(rows))
    now = timezone.now()
    new, changed = [], []
    for decision in decisions:
        row = rows.get(decision.letter_id)
        if row is None:
            state = lineage.get(decision.letter_id)
            row = LetterHandling(letter_id=decision.letter_id, rule_id=state.rule_id if state else None,
                                 tries=state.tries if state else 0, ran_out=list(state.ran_out) if state else [])
            new.append(row)
        else:
            changed.append(row)
        values = fields(decision)
        if "ran_out" in values:
            values["ran_out"] = sorted(set(row.ran_out or []) | set(values["ran_out"]))
        if act:
            if row.rule_id != decision.rule.pk:
                row.tries = 0
            values = {"rule_id": decision.rule.pk, "version": decision.rule.version, "action": decision.what,
                      "acted_at": now, **values}
        for name, value in values.items():
            setattr(row, name, value)
    LetterHandling.objects.bulk_create(new)
    if changed:
        LetterHandling.objects.bulk_update(changed, ["rule", "version", "action", "tries", "next_at", "ran_out", "held",
                                                     "note", "job", "acted_at"])
