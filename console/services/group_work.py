"""Working together on failure groups: a status (new, investigating, fixed - awaiting replay,
resolved, ignored), an owner, tags and notes, kept by the group's fingerprint (GroupTriage).

Whoever may act on letters (ACT) changes them, for a group with letters they may see; each
change is audited (``group.changed``, ``group.note``), concerning the places of those letters,
and the audit rows of a fingerprint are its timeline. A note carries the places of the group's
letters its author could see, and is read only by those who may see all of them (how notes on
groups spanning places are scoped: console.access.scope). A resolved group that gets new
letters is reopened by :func:`reopen_groups` (Celery beat), audited as ``system:groups`` and
told to its owner (``group.reopened``, console.notifications.events)."""

from __future__ import annotations

from functools import partial
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count, Min, Q, QuerySet
from django.utils import timezone

from console.access.actors import Actor
from console.access.roles import ACT, has, role_holding
from console.access.scope import visible
from console.models import AuditEvent, DeadLetter, DeadPlace, GroupNote, GroupTriage
from console.notifications.events import Spread, notify
from console.refusals import Refusal
from console.services import audit
from console.services.audit import actor_name
from console.services.marks import clean_ticket, owner_named

#: Who reopens a resolved group that got new letters.
GROUPS_ACTOR = "system:groups"
MAX_TAGS, MAX_TAG, MAX_NOTE = 20, 50, 5000


class GroupError(Refusal):
    """A change the console refuses, with a message for the person."""


def triage(fingerprints: list[str]) -> dict[str, GroupTriage]:
    return {row.fingerprint: row for row in GroupTriage.objects.select_related("owner")
            .filter(fingerprint__in=fingerprints)}


def matching_fingerprints(*, status: str = "", owner: str = "", tag: str = "") -> tuple[set[str], bool]:
    """The fingerprints a status, owner and tag filter keep: (fingerprints, whether the set
    lists the kept ones (True) or the left-out ones (False: status "new" keeps every group
    without a decision yet))."""
    rows = GroupTriage.objects.all()
    if status == GroupTriage.Status.NEW and not owner and not tag:
        return set(rows.exclude(status=GroupTriage.Status.NEW).values_list("fingerprint", flat=True)), False
    if status:
        rows = rows.filter(status=status)
    if owner:
        rows = rows.filter(owner__username=owner)
    if tag:
        rows = rows.filter(tags__contains=[tag])
    return set(rows.values_list("fingerprint", flat=True)), True


def _letters(fingerprint: str, actor: Actor) -> QuerySet[DeadLetter]:
    letters = visible(actor, DeadLetter.objects.filter(fingerprint=fingerprint))
    if not letters.exists():
        raise GroupError("no such failure group among the letters you may see")
    return letters


def _named(fingerprint: str, letters: QuerySet[DeadLetter]) -> str:
    """The group as the audit's Where names it: its fingerprint and title (the exception type of
    its letters, else their reason), the title as the groups page shows it."""
    first = letters.order_by("id").values_list("exception_type", "reason").first()
    title = (first[0] or first[1]) if first else ""
    return (f"failure group {fingerprint}" + (f" ({title})" if title else ""))[:500]


def _concerns(letters: QuerySet[DeadLetter]) -> list[int]:
    """One letter of the group per place the actor may see it in: what its audit rows concern."""
    return list(letters.order_by().values("place_id").annotate(first=Min("id")).values_list("first", flat=True))


def _allowed(actor: Actor) -> None:
    if not has(actor, ACT):
        raise GroupError(f"working on failure groups needs the {role_holding(ACT)} role")


@transaction.atomic
def do_update_group(fingerprint: str, *, actor: Actor, reason: str = "", **changes: Any) -> GroupTriage:
    """Change a group's ``status``, ``owner`` (a username or None), ``ticket`` (a link) and ``tags``."""
    _allowed(actor)
    letters = _letters(fingerprint, actor)
    row, _ = GroupTriage.objects.select_for_update().get_or_create(fingerprint=fingerprint)
    before = _facts(row)
    if "status" in changes:
        if changes["status"] not in GroupTriage.Status.values:
            raise GroupError(f"status must be one of {', '.join(GroupTriage.Status.values)}")
        if changes["status"] == GroupTriage.Status.RESOLVED and row.status != GroupTriage.Status.RESOLVED:
            row.resolved_at = timezone.now()
        row.status = changes["status"]
    if "owner" in changes:
        row.owner = owner_named(changes["owner"], GroupError)  # type: ignore[assignment]  # a User
    if "ticket" in changes:
        row.ticket = clean_ticket(changes["ticket"], GroupError)
    if "tags" in changes:
        tags = changes["tags"]
        if not isinstance(tags, list) or len(tags) > MAX_TAGS or not all(
                isinstance(tag, str) and 0 < len(tag.strip()) <= MAX_TAG for tag in tags):
            raise GroupError(f"tags are a list of at most {MAX_TAGS} words of at most {MAX_TAG} characters")
        row.tags = sorted({tag.strip() for tag in tags})
    row.save()
    if _facts(row) != before:
        audit.record("group.changed", actor=actor, reason=reason, letter_ids=_concerns(letters),
                     target=_named(fingerprint, letters),
                     details={"fingerprint": fingerprint, "before": before, "after": _facts(row)})
    return row


@transaction.atomic
def do_add_note(fingerprint: str, *, actor: Actor, text: str) -> GroupNote:
    _allowed(actor)
    letters = _letters(fingerprint, actor)
    text = (text or "").strip()
    if not text or len(text) > MAX_NOTE:
        raise GroupError(f"a note is text of 1 to {MAX_NOTE} characters")
    row, _ = GroupTriage.objects.get_or_create(fingerprint=fingerprint)
    # What the author could see of the group is what the note may speak of: who reads it must
    # see all of that (console.access.scope).
    places = sorted(set(letters.order_by().values_list("place_id", flat=True).distinct()))
    note = GroupNote.objects.create(group=row, author=actor_name(actor), text=text, places=places)
    audit.record("group.note", actor=actor, letter_ids=_concerns(letters), target=_named(fingerprint, letters),
                 details={"fingerprint": fingerprint, "note": note.pk, "text": text})
    return note


def notes(fingerprint: str, reader: Actor) -> list[GroupNote]:
    """The group's notes the reader may read (every place a note carries in their scope), oldest first."""
    return list(visible(reader, GroupNote.objects.filter(group__fingerprint=fingerprint)).order_by("at", "id"))


def timeline(fingerprint: str, reader: Actor) -> list[AuditEvent]:
    """The group's audit rows the reader may see, oldest first; a note's row only with the note
    (both concern the same places; the note's rule is checked too, so the two never part)."""
    events = visible(reader, AuditEvent.objects.filter(action__startswith="group.", details__fingerprint=fingerprint))
    readable = [note.pk for note in notes(fingerprint, reader)]
    return list(events.exclude(Q(action="group.note") & ~Q(details__note__in=readable)).order_by("id"))


def reopen_groups() -> list[str]:
    """Reopen every resolved group that got letters since it was resolved (status back to
    new), audited as ``system:groups`` (one row per place with its new letters, so a user
    limited to one of them reads that part), and tell its owner: each channel the count over
    the places its subscription may hear of, never one that includes other places' letters."""
    reopened = []
    for row in GroupTriage.objects.select_related("owner").filter(status=GroupTriage.Status.RESOLVED):
        newer = DeadLetter.objects.filter(fingerprint=row.fingerprint, captured_at__gt=row.resolved_at)
        if not newer.exists():
            continue
        with transaction.atomic():
            row.status, row.resolved_at = GroupTriage.Status.NEW, None
            row.save(update_fields=["status", "resolved_at", "updated_at"])
            counts = dict(newer.order_by().values_list("place_id").annotate(n=Count("id")))
            places = DeadPlace.objects.select_related("broker").in_bulk(list(counts))
            for place_id, count in sorted(counts.items()):
                audit.record("group.reopened", actor=GROUPS_ACTOR, count=count, place=places.get(place_id),
                             target=_named(row.fingerprint, newer),
                             letter_ids=_concerns(newer.filter(place_id=place_id)),
                             details={"fingerprint": row.fingerprint, "new_letters": count})
            owner, fingerprint = row.owner, row.fingerprint

            named = {"owner": owner.get_username() if owner else None, "ticket": row.ticket}

            def told(count: int, place: DeadPlace | None, fingerprint: str = fingerprint,
                     named: dict[str, Any] = named) -> tuple[str, dict[str, Any]]:
                owned = f" (owner {named['owner']})" if named["owner"] else ""
                return (f"resolved failure group {fingerprint[:8]} got {count} new letters: reopened{owned}",
                        {"fingerprint": fingerprint, "new_letters": count, **named})

            notify("group.reopened", key=f"reopened:{fingerprint}", subject="", details={},
                   spread=Spread({places[pk]: n for pk, n in counts.items() if pk in places}, told),
                   audience=partial(_is_owner, owner))
        reopened.append(row.fingerprint)
    return reopened


def _is_owner(owner: AbstractBaseUser | None, user: AbstractBaseUser) -> bool:
    return owner is not None and user.pk == owner.pk


def _facts(row: GroupTriage) -> dict[str, Any]:
    return {"status": row.status, "owner": row.owner.get_username() if row.owner else None, "tags": list(row.tags),
            "ticket": row.ticket}
