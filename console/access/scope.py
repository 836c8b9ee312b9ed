"""Scopes: a user with RoleScope rows sees and acts only on those brokers and places.

One helper narrows any queryset of brokers, places, letters or jobs (``visible``); one checks
the objects a URL names (``allows_url``); one guards job creation (``guard_job``).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q, QuerySet

from console.access.roles import PURGE, has


class OutOfScope(PermissionError):
    """The user may not see or act on this broker, place or letter."""


@dataclass(frozen=True)
class Scope:
    """The brokers and places a user is limited to; ``None`` sets mean unlimited."""

    brokers: frozenset[int] | None
    places: frozenset[int] | None

    @property
    def unlimited(self) -> bool:
        return self.brokers is None

    def allows(self, broker_id: int | None, place_id: int | None) -> bool:
        if self.unlimited:
            return True
        return broker_id in self.brokers or place_id in self.places


UNLIMITED = Scope(None, None)


def scope_of(user) -> Scope:
    """The scope of a user; string actors (scripts, commands without --actor) are unlimited."""
    from console.models import RoleScope

    if isinstance(user, str) or user is None or not user.is_authenticated or user.is_superuser:
        return UNLIMITED
    cached = getattr(user, "_dlo_scope", None)
    if cached is not None:
        return cached
    rows = list(RoleScope.objects.filter(user=user).values_list("broker_id", "place_id"))
    scope = UNLIMITED if not rows else Scope(frozenset(b for b, _ in rows if b), frozenset(p for _, p in rows if p))
    user._dlo_scope = scope
    return scope


def _lookups(model) -> tuple[str, str]:
    """(broker id lookup, place id lookup) of a model the console scopes."""
    from console.models import Broker, DeadLetter, DeadPlace, Job

    return {
        Broker: ("pk", "places__pk"),
        DeadPlace: ("broker_id", "pk"),
        DeadLetter: ("broker_id", "place_id"),
        Job: ("place__broker_id", "place_id"),
    }[model]


def visible(user, queryset: QuerySet) -> QuerySet:
    """``queryset`` (of brokers, places, letters or jobs) narrowed to what ``user`` may see."""
    scope = scope_of(user)
    if scope.unlimited:
        return queryset
    broker, place = _lookups(queryset.model)
    narrowed = queryset.filter(Q(**{f"{broker}__in": scope.brokers}) | Q(**{f"{place}__in": scope.places}))
    # A broker with several allowed places would be listed once per place.
    return narrowed.distinct() if place.startswith("places__") else narrowed


#: URL keyword -> the model whose row it names.
_URL_OBJECTS = {"broker_id": "Broker", "place_id": "DeadPlace", "letter_id": "DeadLetter", "job_id": "Job"}


def allows_url(user, kwargs: dict) -> bool:
    """Whether every broker, place, letter or job named in a URL's keywords is in scope.

    An id that does not exist is allowed here: the view answers 404 for it as for anyone.
    """
    if scope_of(user).unlimited:
        return True
    from console import models

    for key, value in kwargs.items():
        if key in _URL_OBJECTS:
            model = getattr(models, _URL_OBJECTS[key])
            rows = model.objects.filter(pk=value)
            if rows.exists() and not visible(user, rows).exists():
                return False
    return True


def guard_place(actor, place) -> None:
    """Refuse to act on a place out of the actor's scope."""
    if not scope_of(actor).allows(place.broker_id, place.pk):
        raise OutOfScope(f"{place} is outside what you may act on")


def guard_job(actor, kind: str, letters: QuerySet) -> None:
    """Refuse a letters job the actor may not start: a purge without the purge permission, or
    any letter outside the actor's scope."""
    if kind == "purge" and not has(actor, PURGE):
        raise OutOfScope("purging letters needs the admin role")
    guard_letters(actor, letters)


def guard_letters(actor, letters: QuerySet) -> None:
    """Refuse a selection that holds any letter outside the actor's scope."""
    scope = scope_of(actor)
    if scope.unlimited:
        return
    outside = letters.exclude(Q(broker_id__in=scope.brokers) | Q(place_id__in=scope.places))
    if outside.exists():
        raise OutOfScope(f"{outside.count()} of the letters are outside what you may act on")
