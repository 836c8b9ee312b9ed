"""Marks for people (issue 51): a letter marked "investigating" with an owner and the ticket
they work in (LetterMark), as a failure group is (console.services.group_work: its status,
owner and ``ticket``). Whoever may act on letters marks one they may see; each mark and each
taking away is audited (``letter.marked``, ``letter.unmarked``), concerning the letter's place."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from console.access.actors import Actor
from console.access.roles import ACT, has, role_holding
from console.access.scope import visible
from console.models import DeadLetter, LetterMark
from console.refusals import Forbidden, Missing, Refusal
from console.services import audit
from console.services.audit import actor_name
from console.services.parsing import unstorable_text

MAX_TICKET = 500


class MarkError(Refusal):
    """A mark the console will not keep as asked, with a message for the person."""


def clean_ticket(ticket: Any, error: type[Refusal] = MarkError) -> str:
    """A ticket link: empty, or an http(s) URL of at most 500 characters (a ``javascript:`` link
    is refused, not shown); ``error`` says why not."""
    if ticket in (None, ""):
        return ""
    if not isinstance(ticket, str) or unstorable_text(ticket) or len(ticket) > MAX_TICKET:
        raise error(f"ticket is a link of at most {MAX_TICKET} characters")
    parts = urlsplit(ticket.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise error("ticket is an http or https link (https://tracker.example.com/OPS-12)")
    return ticket.strip()


def owner_named(name: Any, error: type[Refusal] = MarkError) -> AbstractBaseUser | None:
    """The active user called ``name``, or None for no owner; ``error`` when there is none."""
    if name in (None, ""):
        return None
    owner: AbstractBaseUser | None = get_user_model().objects.filter(username=str(name), is_active=True).first()
    if owner is None:
        raise error(f"no active user {name!r}")
    return owner


def owner_or_actor(name: Any, actor: Actor, error: type[Refusal] = MarkError) -> AbstractBaseUser | None:
    """The owner named, or by default whoever acts (when a person)."""
    if name not in (None, ""):
        return owner_named(name, error)
    return actor if isinstance(actor, AbstractBaseUser) else None


def do_mark_letter(letter_id: int, *, actor: Actor, owner: Any = None, ticket: Any = "",
                   reason: str = "") -> LetterMark:
    """Mark a letter "investigating" (or change its mark): its owner (a username, the marker by
    default) and ticket link."""
    letter = _letter(letter_id, actor)
    who = owner_or_actor(owner, actor)
    link = clean_ticket(ticket)
    with transaction.atomic():
        mark, made = LetterMark.objects.update_or_create(  # type: ignore[misc]  # the owner is a User
            letter=letter, defaults={"owner": who, "ticket": link, "marked_by": actor_name(actor)})
        audit.record("letter.marked", actor=actor, reason=reason, place=letter.place, letter_ids=[letter.pk],
                     details={"owner": who.get_username() if who else None, "ticket": link, "new": made})
    return mark


def do_unmark_letter(letter_id: int, *, actor: Actor, reason: str = "") -> None:
    """Take a letter's mark away."""
    letter = _letter(letter_id, actor)
    with transaction.atomic():
        if not LetterMark.objects.filter(letter=letter).delete()[0]:
            raise MarkError("the letter is not marked")
        audit.record("letter.unmarked", actor=actor, reason=reason, place=letter.place, letter_ids=[letter.pk])


def _letter(letter_id: int, actor: Actor) -> DeadLetter:
    if not has(actor, ACT):
        raise Forbidden(f"marking letters needs the {role_holding(ACT)} role")
    letter: DeadLetter | None = visible(actor, DeadLetter.objects.select_related("place")).filter(pk=letter_id).first()
    if letter is None:
        raise Missing(f"no letter {letter_id}")
    return letter
