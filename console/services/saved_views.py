"""Saved views (issue 51): a name, a description and a letter selection people keep, to come
back to every morning ("billing's letters from the new release", "poison letters older than a
day"), instead of building the filter again by hand.

- **Who reads one.** Its owner; everyone when it is shared with everyone; the holders of a role
  when it is shared with that role (a user holds the roles up to their own: an admin reads what
  is shared with operators). A view shows each reader only what that reader may see: its
  letters and its count start from the reader's scope, and a content filter is confirmed
  against what the reader is shown (console.services.selection.visible_matches), so a shared
  view is never a window on another person's places or on masked content.
- **What it keeps.** The keys of console.services.selection's filter, as strings, and
  ``older_than`` in hours: an age relative to each look (``until`` is now minus that many
  hours then), where the pages' "older than" preset gives an absolute moment.
- **Changes.** Made, changed and deleted by :func:`do_save_view`, :func:`do_change_view` and
  :func:`do_delete_view`, each audited (``view.saved``, ``view.changed``, ``view.deleted``), by
  its owner, or an admin who manages users. A view's name, description and filter are what
  people type: masked for the reader wherever they are shown (pages and API mask by default).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import OperationalError, connection, transaction
from django.db.models import BooleanField, ExpressionWrapper, Model, Q, QuerySet, Sum
from django.utils import timezone
from psycopg.errors import QueryCanceled

from console.access.actors import Actor
from console.access.redaction_policy import for_user
from console.access.roles import MANAGE_USERS, ROLES, VIEW, has, role_of
from console.access.scope import visible
from console.models import DeadLetter, GroupCount, SavedView
from console.refusals import Forbidden, Missing, Refusal
from console.services import audit, group_counts
from console.services.parsing import ascii_whole_number, unstorable_text
from console.services.rules.matching import without_jit
from console.services.selection import (
    CONTENT_KEYS,
    FILTER_KEYS,
    Matches,
    capped_count,
    clean_filter,
    filter_letters,
    visible_matches,
)

#: An age relative to each look, in hours (the pages' "older than").
OLDER_THAN = "older_than"
#: At most 10 years.
MAX_HOURS = 24 * 366 * 10
MAX_NAME, MAX_DESCRIPTION = 100, 2000
#: A reader's navigation counts each view's letters up to this many ("more than" past it).
NAV_COUNT_CAP = 1000
#: ... within this many milliseconds each (else the count is left to the view's page).
COUNT_BUDGET_MS = 250


class ViewError(Refusal):
    """A view the console will not keep as asked, with a message for the person."""


def readable_views(reader: Actor) -> QuerySet[SavedView]:
    """The views ``reader`` may open: their own, those shared with everyone, and those shared
    with a role they hold (a role holds the ones before it)."""
    if not has(reader, VIEW) or isinstance(reader, str):
        return SavedView.objects.none()
    held = _roles_held(reader)
    return SavedView.objects.filter(
        Q(owner_id=reader.pk) | Q(sharing=SavedView.Sharing.EVERYONE)
        | Q(sharing=SavedView.Sharing.ROLE, role__in=held)).select_related("owner")


def view_for(reader: Actor, view_id: int) -> SavedView:
    """The view ``view_id`` if ``reader`` may open it, else :class:`~console.refusals.Missing`
    (a 404 either way: a view one may not open is not said to exist)."""
    view = readable_views(reader).filter(pk=view_id).first()
    if view is None:
        raise Missing(f"no view {view_id}")
    return view


def letters_filter(view: SavedView) -> dict[str, str]:
    """The view's filter as console.services.selection takes it at this moment (``older_than``
    becomes ``until``, now minus that many hours, or the view's own ``until`` if earlier)."""
    f = clean_filter(view.filter)
    hours = ascii_whole_number(str(view.filter.get(OLDER_THAN, "")), 1, MAX_HOURS)
    if hours is not None:
        cutoff = (timezone.now() - timedelta(hours=hours)).isoformat()
        f["until"] = min(f["until"], cutoff) if "until" in f else cutoff
    return f


def view_matches(view: SavedView, reader: Actor) -> Matches:
    """The letters of ``view`` that ``reader`` may see, as the Letters page finds them."""
    return visible_matches(reader, letters_filter(view), visible(reader, DeadLetter.objects.all()))


def view_count(view: SavedView, reader: Actor, cap: int = NAV_COUNT_CAP,
               budget_ms: int = COUNT_BUDGET_MS) -> tuple[int | None, bool]:
    """(count, exact) of the view's letters ``reader`` may see; a content filter that a
    masked reader's confirmation could not finish counts as not exact. A filter the failure
    groups' counts are kept by (console.services.group_counts) is answered from them, whole
    and at once, unless it asks of content the reader sees masked (the exception: confirmed
    letter by letter). Any other count PostgreSQL has not made within ``budget_ms`` is None (a
    narrow filter over a million letters reads them all: the view's page counts it), so a menu
    of many views answers in bounded time."""
    quick = quick_count(view, reader)
    if quick is not None:
        return quick
    try:
        # A capped count stops at its cap: compiling it (JIT) or starting parallel workers costs
        # more than it saves (40 ms of a 50 ms count over a million letters).
        with without_jit(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL statement_timeout = %s", [f"{int(budget_ms)}ms"])
            cursor.execute("SET LOCAL max_parallel_workers_per_gather = 0")
            found = view_matches(view, reader)
            count, exact = capped_count(found.letters, cap)
    except OperationalError as exc:
        if not isinstance(exc.__cause__, QueryCanceled):
            raise
        return None, False
    return count, exact and found.complete


def quick_count(view: SavedView, reader: Actor) -> tuple[int, bool] | None:
    """(count, exact) of a view filtered only by what the failure groups' counts are kept by
    (console.services.group_counts), read from them at once and whole; None for any other view,
    or for a reader who sees masked content the filter asks of (the exception), whose count is
    confirmed letter by letter (:func:`view_count`)."""
    return quick_counts([view], reader).get(view.pk)


def quick_counts(views: Iterable[SavedView], reader: Actor) -> dict[int, tuple[int, bool]]:
    """:func:`quick_count` of each of ``views`` that the groups' counts answer, by view id: one
    query over the counts the reader may see, a sum per view (the Views menu's)."""
    masked = for_user(reader) is not None
    sums: dict[str, Sum] = {}
    for view in views:
        f = letters_filter(view)
        if not group_counts.counted(f) or (set(f) & set(CONTENT_KEYS) and masked):
            continue
        where = filter_condition(f, GroupCount)
        if where is not None:
            sums[f"view_{view.pk}"] = Sum("letters", filter=where)
    if not sums:
        return {}
    found = visible(reader, GroupCount.objects.all()).aggregate(**sums)
    return {int(name.removeprefix("view_")): (int(total or 0), True) for name, total in found.items()}


def filter_condition(f: dict[str, str], model: type[Model]) -> ExpressionWrapper[Any] | None:
    """A view's filter (``letters_filter``) as one condition on a row of ``model`` (a letter, or a
    count of the failure groups'), as console.services.selection reads it; None when it needs a
    join to another table. Made once per process for each filter (the parser takes 5 ms): a
    filter whose age moves with the clock (``older_than``) is a new filter at every look."""
    return _condition_made(tuple(sorted(f.items())), model)


@functools.lru_cache(maxsize=2048)
def _condition_made(f: tuple[tuple[str, str], ...], model: type[Model]) -> ExpressionWrapper[Any] | None:
    query = filter_letters(dict(f), model._default_manager.all()).query
    if any(count for alias, count in query.alias_refcount.items() if alias != query.base_table):
        return None
    where = query.where if query.where.children else Q(pk__isnull=False)  # no filter: every row
    return ExpressionWrapper(where, output_field=BooleanField())


def kept_filter(query: Any) -> dict[str, str]:
    """The part of a page's query a view keeps: the filter keys, and the "older than" preset as
    hours (relative to each look, where the Letters page turns it into a moment)."""
    return {key: value for key, value in query.items() if (key in FILTER_KEYS or key == OLDER_THAN) and value}


def clean_view_filter(given: Any) -> dict[str, str]:
    """A view's filter as given (the Letters page's query, an API body): the filter keys and
    ``older_than``, each a storable string, the whole parsed as the Letters page parses it
    (SelectionError, a 400, for what it does not accept)."""
    if not isinstance(given, dict):
        raise ViewError("filter is an object of the Letters page's filter keys")
    unknown = sorted(set(given) - {*FILTER_KEYS, OLDER_THAN})
    if unknown:
        raise ViewError(f"filter: unknown keys {', '.join(unknown)} (the Letters page's: "
                        f"{', '.join((*FILTER_KEYS, OLDER_THAN))})")
    kept: dict[str, str] = {}
    for key, value in given.items():
        if value in (None, ""):
            continue
        if not isinstance(value, (str, int)) or isinstance(value, bool):
            raise ViewError(f"filter.{key} is a string")
        if problem := unstorable_text(str(value)):
            raise ViewError(f"filter.{key} {problem}")
        kept[key] = str(value)
    if OLDER_THAN in kept and ascii_whole_number(kept[OLDER_THAN], 1, MAX_HOURS) is None:
        raise ViewError(f"filter.older_than is a whole number of hours, 1 to {MAX_HOURS}")
    filter_letters(kept)  # parsed now: a value it refuses is a 400 here, not at each look
    return kept


def do_save_view(*, actor: Actor, name: str, filter: Any, description: str = "",
                 sharing: str = SavedView.Sharing.PRIVATE, role: str = "") -> SavedView:
    """Keep a view owned by ``actor`` (audited ``view.saved``)."""
    if not isinstance(actor, AbstractBaseUser) or not has(actor, VIEW):
        raise Forbidden("a view is kept for a person who may view the console")
    fields = _cleaned(name=name, description=description, filter=filter, sharing=sharing, role=role)
    with transaction.atomic():
        view = SavedView.objects.create(owner=actor, **fields)
        audit.record("view.saved", actor=actor, target=f"view {view.pk}", details=_audited(view))
    return view


def do_change_view(view: SavedView, *, actor: Actor, **changes: Any) -> SavedView:
    """Change a view's name, description, filter or sharing (audited ``view.changed`` with what
    it was): its owner, or an admin who manages users."""
    _may_change(view, actor)
    known = {"name", "description", "filter", "sharing", "role"}
    if unknown := sorted(set(changes) - known):
        raise ViewError(f"a view has no {', '.join(unknown)}")
    current = {key: getattr(view, key) for key in known}
    fields = _cleaned(**{**current, **changes})
    with transaction.atomic():
        before = _audited(view)
        for key, value in fields.items():
            setattr(view, key, value)
        view.save()
        audit.record("view.changed", actor=actor, target=f"view {view.pk}",
                     details={"before": before, "after": _audited(view)})
    return view


def do_delete_view(view: SavedView, *, actor: Actor) -> None:
    """Delete a view (audited ``view.deleted`` with what it was)."""
    _may_change(view, actor)
    with transaction.atomic():
        audit.record("view.deleted", actor=actor, target=f"view {view.pk}", details=_audited(view))
        view.delete()


def may_change(view: SavedView, actor: Actor) -> bool:
    return isinstance(actor, AbstractBaseUser) and (view.owner_id == actor.pk or has(actor, MANAGE_USERS))


def _may_change(view: SavedView, actor: Actor) -> None:
    if not may_change(view, actor):
        raise Forbidden("only the view's owner, or an admin who manages users, changes or deletes it")


def _cleaned(*, name: Any, description: Any, filter: Any, sharing: Any, role: Any) -> dict[str, Any]:
    name = _text(name, "name", MAX_NAME).strip()
    if not name:
        raise ViewError("a view needs a name")
    if sharing not in SavedView.Sharing.values:
        raise ViewError(f"sharing is one of {', '.join(SavedView.Sharing.values)}")
    role = _text(role or "", "role", 20)
    if sharing == SavedView.Sharing.ROLE and role not in ROLES:
        raise ViewError(f"a view shared with a role names one of {', '.join(ROLES)}")
    return {"name": name, "description": _text(description or "", "description", MAX_DESCRIPTION),
            "filter": clean_view_filter(filter), "sharing": sharing,
            "role": role if sharing == SavedView.Sharing.ROLE else ""}


def _text(value: Any, name: str, longest: int) -> str:
    if not isinstance(value, str):
        raise ViewError(f"{name} is text")
    if problem := unstorable_text(value):
        raise ViewError(f"{name} {problem}")
    if len(value) > longest:
        raise ViewError(f"{name} is at most {longest} characters")
    return value


def _roles_held(reader: Actor) -> list[str]:
    """The roles whose shared views ``reader`` reads: their own and the ones before it."""
    names = list(ROLES)
    own = role_of(reader)
    return names[: names.index(own) + 1] if own in names else []


def _audited(view: SavedView) -> dict[str, Any]:
    return {"name": view.name, "description": view.description, "filter": view.filter, "sharing": view.sharing,
            "role": view.role, "owner": view.owner.get_username()}
