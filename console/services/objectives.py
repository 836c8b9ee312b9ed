"""Objectives on how long letters wait (issue 51): depth alone says little, a dead queue holding
3 letters for a week is a worse failure than one holding 3,000 for a minute.

An objective (console.models.Objective) is set on a dead place, an origin or a saved view (its
filter over every letter, whoever reads it: so an objective on a view is set and seen only by
people without limits who may open the view):

- ``oldest``: no held letter waits longer than D (the oldest held letter's age against D);
- ``resolved``: P% of the letters are resolved within D of their capture. Resolved is replayed
  (and confirmed: the state a replay sets once the broker confirmed), moved, marked failed or
  purged; a letter's time to resolution is from its capture to its last change of state. The
  share is over the letters captured in the last 7 (and 30) days whose outcome is known: those
  resolved, in time or late, and those still open past D (already late); a letter still open
  and younger than D is not counted yet.

Its state: **breached** (the oldest waits longer than D; for ``resolved``, the 7 days' share
under P), **at risk** (the oldest waits over 80% of D: for ``resolved``, a letter that would
count against it soon), else **met**. :func:`evaluate_objectives` (Celery beat, every
DLO_OBJECTIVES_SECONDS) judges every objective: one look at its oldest held letter (the first
held by id, an index probe), the shares counted at most every :data:`ATTAINMENT_SECONDS`, both
windows in one pass. A
change of state is told once (``objective.at_risk``, ``objective.breached``,
``objective.recovered``, naming its owner) and audited as ``system:objectives``.

Set and deleted by operators (who may act on letters) on places, origins and views they may see,
through :func:`do_set_objective` and :func:`do_delete_objective`, audited."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Count, DurationField, ExpressionWrapper, F, Q, QuerySet
from django.utils import timezone

from console.access.actors import Actor
from console.access.roles import ACT, has, role_holding
from console.access.scope import OutOfScope, scope_of, visible
from console.models import DeadLetter, DeadPlace, LetterState, Objective, Origin, SavedView
from console.notifications.events import notify
from console.refusals import Forbidden, Refusal
from console.services import audit
from console.services.marks import owner_or_actor
from console.services.parsing import unstorable_text
from console.services.saved_views import letters_filter, readable_views
from console.services.selection import filter_letters

#: Who judges the objectives.
OBJECTIVES_ACTOR = "system:objectives"
#: Past this share of D, an objective is at risk.
AT_RISK = 0.8
#: The states a letter is resolved in.
RESOLVED = (LetterState.REPLAYED, LetterState.FAILED, LetterState.PURGED)
#: The shares are counted at most this often (seconds): they read a month of a place's letters
#: (2 s at a million: benchmarks/README.md, views_scale.py).
ATTAINMENT_SECONDS = 1800
#: The windows the shares are counted over, in days.
WINDOWS = (7, 30)
#: The longest D: a year.
MAX_SECONDS = 366 * 86400

#: The event told when an objective comes into each state from another.
EVENT_OF = {Objective.State.AT_RISK: "objective.at_risk", Objective.State.BREACHED: "objective.breached",
            Objective.State.MET: "objective.recovered"}


class ObjectiveError(Refusal):
    """An objective the console will not keep as asked, with a message for the person."""


@dataclass(frozen=True)
class Judged:
    """An objective's figures at one moment, and the state they make."""

    oldest_age: float | None
    attainment_7d: float | None
    attainment_30d: float | None
    state: str


def letters_of(objective: Objective) -> QuerySet[DeadLetter]:
    """The letters an objective is about: its place's, those that died from its origin, or its
    view's (the view's filter at this moment, over every place)."""
    if objective.place_id is not None:
        return DeadLetter.objects.filter(place_id=objective.place_id)
    if objective.view is not None:
        return filter_letters(letters_filter(objective.view))
    origin = objective.origin
    assert origin is not None  # one target (a constraint)
    return DeadLetter.objects.filter(broker_id=origin.broker_id, place__scope=origin.scope,
                                     origin_queue=origin.name)


def oldest_age(objective: Objective, now: datetime) -> float | None:
    """Seconds the oldest held letter has waited, or None when none is held. The first held by
    id is the first captured (ids are given at capture): an index probe, not a scan."""
    first = (letters_of(objective).filter(state=LetterState.HELD).order_by("id")
             .values_list("captured_at", flat=True).first())
    return None if first is None else max(0.0, (now - first).total_seconds())


def attainments(objective: Objective, now: datetime, windows: tuple[int, ...] = WINDOWS) -> list[float | None]:
    """For each window of days, the share (0..1) of the letters captured in it whose outcome is
    known that were resolved within D (None when none is known yet): one pass over the longest."""
    within = timedelta(seconds=objective.seconds)
    letters = letters_of(objective).filter(captured_at__gt=now - timedelta(days=max(windows)), captured_at__lte=now)
    waited = ExpressionWrapper(F("state_changed_at") - F("captured_at"), output_field=DurationField())
    resolved = Q(state__in=RESOLVED)
    counted: dict[str, Any] = {}
    for days in windows:
        window = Q(captured_at__gt=now - timedelta(days=days))
        counted[f"in_time_{days}"] = Count("id", filter=window & resolved & Q(waited__lte=within))
        counted[f"known_{days}"] = Count("id", filter=window & (resolved | Q(captured_at__lt=now - within)))
    counts = letters.annotate(waited=waited).aggregate(**counted)
    return [counts[f"in_time_{days}"] / counts[f"known_{days}"] if counts[f"known_{days}"] else None
            for days in windows]


def attainment(objective: Objective, now: datetime, days: int) -> float | None:
    """The share of one window (:func:`attainments`)."""
    return attainments(objective, now, (days,))[0]


def judge(objective: Objective, now: datetime, *, count_shares: bool = True) -> Judged:
    """The objective's figures now and the state they make (the shares as last counted unless
    ``count_shares``)."""
    age = oldest_age(objective, now)
    if count_shares:
        week, month = attainments(objective, now)
    else:
        week, month = objective.attainment_7d, objective.attainment_30d
    state = Objective.State.MET
    if age is not None and age > AT_RISK * objective.seconds:
        state = Objective.State.AT_RISK
    if objective.kind == Objective.Kind.OLDEST:
        if age is not None and age > objective.seconds:
            state = Objective.State.BREACHED
    elif week is not None and week * 100 < (objective.percent or 0):
        state = Objective.State.BREACHED
    return Judged(age, week, month, state)


def evaluate_objectives(now: datetime | None = None) -> list[tuple[Objective, str]]:
    """Judge every objective; returns those whose state changed, with the event told."""
    now = now or timezone.now()
    changed = []
    for objective in Objective.objects.select_related("place__broker", "origin__broker", "view", "owner"):
        due = objective.attainment_at is None or (now - objective.attainment_at).total_seconds() >= ATTAINMENT_SECONDS
        judged = judge(objective, now, count_shares=due)
        fields = _figures(judged, now, shares=due)
        with transaction.atomic():
            if judged.state != objective.state:
                fields.update(state=judged.state, state_since=now)
                event = EVENT_OF[Objective.State(judged.state)]
                _tell(objective, event, judged)
                changed.append((objective, event))
            for key, value in fields.items():
                setattr(objective, key, value)
            Objective.objects.filter(pk=objective.pk).update(**fields)
    return changed


def _tell(objective: Objective, event: str, judged: Judged) -> None:
    owner = objective.owner.get_username() if objective.owner else None
    details = {"objective": objective.name, "kind": objective.kind, "seconds": objective.seconds,
               "percent": objective.percent, "state": judged.state, "oldest_age_seconds": judged.oldest_age,
               "attainment_7d": judged.attainment_7d, "owner": owner, "target": target_label(objective)}
    words = {"objective.at_risk": "is at risk", "objective.breached": "is breached",
             "objective.recovered": "is met again"}[event]
    subject = f"objective {objective.name} on {target_label(objective)} {words}"
    subject += f" (owner {owner})" if owner else ""
    notify(event, key=f"objective:{objective.pk}:{event}", subject=subject, place=objective.place, details=details)
    audit.record(event, actor=OBJECTIVES_ACTOR, place=objective.place, broker=_broker(objective),
                 target=f"objective {objective.name}", outcome=judged.state, details=details)


def target_label(objective: Objective) -> str:
    if objective.place is not None:
        return f"{objective.place.broker.name}/{objective.place.name}"
    if objective.view is not None:
        return f"view {objective.view.name}"
    assert objective.origin is not None  # one target (a constraint)
    return f"{objective.origin.broker.name} origin {objective.origin.name}"


def _broker(objective: Objective) -> Any:
    if objective.place is not None:
        return objective.place.broker
    return objective.origin.broker if objective.origin is not None else None  # a view's: every broker


def do_set_objective(*, actor: Actor, name: str, kind: str, seconds: Any, percent: Any = None,
                     place: DeadPlace | None = None, origin: Origin | None = None, view: SavedView | None = None,
                     owner: Any = None, reason: str = "") -> Objective:
    """Set an objective on a place, an origin or a view ``actor`` may see (audited
    ``objective.set``); judged at once."""
    if not has(actor, ACT):
        raise Forbidden(f"setting objectives needs the {role_holding(ACT)} role")
    if sum(target is not None for target in (place, origin, view)) != 1:
        raise ObjectiveError("an objective is set on one place, one origin or one view")
    if view is not None:
        if not readable_views(actor).filter(pk=view.pk).exists():
            raise OutOfScope("that view is not one you may open")
        if not scope_of(actor).unlimited:
            raise OutOfScope("an objective on a view is judged over every place: it is set by people without limits")
    else:
        target = place if place is not None else origin
        model = DeadPlace if place is not None else Origin
        if not visible(actor, model.objects.filter(pk=target.pk)).exists():  # type: ignore[union-attr]
            raise OutOfScope("that place or origin is not one you may see")
    name = (name or "").strip()
    if not name or len(name) > 100 or unstorable_text(name):
        raise ObjectiveError("an objective needs a name of 1 to 100 storable characters")
    if kind not in Objective.Kind.values:
        raise ObjectiveError(f"kind is one of {', '.join(Objective.Kind.values)}")
    if not isinstance(seconds, int) or isinstance(seconds, bool) or not 1 <= seconds <= MAX_SECONDS:
        raise ObjectiveError(f"seconds (D) is a whole number from 1 to {MAX_SECONDS}")
    if kind == Objective.Kind.RESOLVED:
        if not isinstance(percent, (int, float)) or isinstance(percent, bool) or not 0 < percent <= 100:
            raise ObjectiveError("percent (P) is a number above 0 and at most 100")
    else:
        percent = None
    who = owner_or_actor(owner, actor, ObjectiveError)
    with transaction.atomic():
        objective = Objective.objects.create(  # type: ignore[misc]  # the owner is a User
            name=name, kind=kind, seconds=seconds, percent=percent, place=place, origin=origin, view=view, owner=who,
            created_by=audit.actor_name(actor))
        audit.record("objective.set", actor=actor, reason=reason, place=place, broker=_broker(objective),
                     target=f"objective {name}", details=_facts(objective))
    evaluate_one(objective)
    return objective


def do_delete_objective(objective: Objective, *, actor: Actor, reason: str = "") -> None:
    if not has(actor, ACT):
        raise Forbidden(f"deleting objectives needs the {role_holding(ACT)} role")
    with transaction.atomic():
        audit.record("objective.deleted", actor=actor, reason=reason, place=objective.place,
                     broker=_broker(objective), target=f"objective {objective.name}", details=_facts(objective))
        objective.delete()


def evaluate_one(objective: Objective, now: datetime | None = None) -> None:
    """Judge a new objective at once (its state from the start, told of nothing)."""
    now = now or timezone.now()
    judged = judge(objective, now)
    Objective.objects.filter(pk=objective.pk).update(state=judged.state, state_since=now,
                                                     **_figures(judged, now, shares=True))
    objective.refresh_from_db()


def _figures(judged: Judged, now: datetime, *, shares: bool) -> dict[str, Any]:
    """The columns an evaluation writes: the oldest age always, the shares when counted."""
    fields: dict[str, Any] = {"oldest_age_seconds": judged.oldest_age, "evaluated_at": now}
    if shares:
        fields.update(attainment_7d=judged.attainment_7d, attainment_30d=judged.attainment_30d, attainment_at=now)
    return fields


def readable_objectives(reader: Actor) -> QuerySet[Objective]:
    """The objectives ``reader`` may see: on places and origins in their scope, and on views
    they may open (judged over every place: only for readers without limits, as the scope has
    it)."""
    return visible(reader, Objective.objects.all()).filter(
        Q(view__isnull=True) | Q(view__in=readable_views(reader)))


def objectives_of_view(reader: Actor, view: SavedView) -> list[Objective]:
    """The objectives on a view ``reader`` may see (the view's page)."""
    return list(readable_objectives(reader).filter(view=view).select_related("owner"))


def objectives_of_places(reader: Actor, place_ids: list[int]) -> dict[int, list[Objective]]:
    """The objectives on each of these places ``reader`` may see (the inventory's column)."""
    found: dict[int, list[Objective]] = {}
    for objective in visible(reader, Objective.objects.filter(place_id__in=place_ids)):
        found.setdefault(objective.place_id, []).append(objective)
    return found


def _facts(objective: Objective) -> dict[str, Any]:
    return {"name": objective.name, "kind": objective.kind, "seconds": objective.seconds,
            "percent": objective.percent, "place": objective.place_id, "origin": objective.origin_id,
            "view": objective.view_id,
            "owner": objective.owner.get_username() if objective.owner else None}
