"""Scopes: a user with RoleScope rows sees and acts only on those brokers and places.

One helper narrows any queryset the console reads (``visible``: brokers, places, letters and
their group counts, origins, jobs, audit events, failure group history); one checks the objects a URL names
(``allows_url``). Requests for jobs are guarded by console.access.guards.

Scopes fail closed. A user with rows is limited even when the broker or place of every row has
been removed (the rows stay, empty: console.models.access.RoleScope). What a limited user
reads must concern only what they are allowed, not merely touch it: an audit event or a job
over letters of an allowed place and another one is hidden, since it would show the other's
name, letters or log; an event about a broker as a whole (added, changed, discovered) is seen
by users limited to that broker, not by those limited to some of its places; an event that
names no broker or place (role grants, redaction rules, tokens) is seen only without limits.

Texts built from several places follow the same rule. A failure group can span places (one
origin dying into A and B): a note on it carries the places of the group's letters its author
could see when writing it (GroupNote.places), and a reader sees the note only when they may see
every one of those places; a note carrying none (written before migration 0032 and explained by
no audit row) is read only without limits. Its audit row (``group.note``) concerns the same
places, so the group's timeline hides and shows it alike. Counts sent about a group (a reopened
group's new letters, console.notifications.events) are counted over the places each subscription may
hear of. Subscriptions and deliveries are seen with the place they are about; one about every
place, or about none, only without limits.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Exists, OuterRef, Q, QuerySet

from console.refusals import Forbidden


class OutOfScope(Forbidden, PermissionError):
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
        if self.brokers is None or self.places is None:  # unlimited
            return True
        return broker_id in self.brokers or place_id in self.places

    @property
    def place_ids(self) -> frozenset[int]:
        """The places of a limited scope (none named for an unlimited one)."""
        return self.places or frozenset()


UNLIMITED = Scope(None, None)


def scope_of(user) -> Scope:
    """The scope of a user; string actors (scripts, commands without --actor) are unlimited.

    Any RoleScope row limits the user, even one whose broker or place was removed since:
    it then allows nothing (fail closed)."""
    from console.access.actors import RuleActor
    from console.models import RoleScope

    if isinstance(user, RuleActor):
        return _rule_scope(user)
    if isinstance(user, str) or user is None or not user.is_authenticated or user.is_superuser:
        return UNLIMITED
    cached = getattr(user, "_dlo_scope", None)
    if cached is not None:
        return cached
    rows = list(RoleScope.objects.filter(user=user).values_list("broker_id", "place_id"))
    scope = UNLIMITED if not rows else Scope(frozenset(b for b, _ in rows if b), frozenset(p for _, p in rows if p))
    user._dlo_scope = scope
    return scope


NOWHERE = Scope(frozenset(), frozenset())


def _rule_scope(actor) -> Scope:
    """The letters a rule may take: the scope of the person who enabled it, narrowed to the
    rule's broker or place. Where it may publish is not narrowed (:func:`publish_scope_of`)."""
    from console.models import DeadPlace

    base = scope_of(actor.user) if actor.user is not None else NOWHERE
    if actor.place_id is not None:
        broker_id = DeadPlace.objects.filter(pk=actor.place_id).values_list("broker_id", flat=True).first()
        places = frozenset({actor.place_id}) if base.allows(broker_id, actor.place_id) else frozenset()
        return Scope(frozenset(), places)
    if actor.broker_id is not None:
        if base.allows(actor.broker_id, None):
            return Scope(frozenset({actor.broker_id}), frozenset())
        return Scope(frozenset(), frozenset(DeadPlace.objects.filter(pk__in=base.place_ids, broker_id=actor.broker_id)
                                            .values_list("pk", flat=True)))
    return base


def publish_scope_of(actor) -> Scope:
    """Where ``actor`` may publish (replay or move into): their own scope, and for a rule its
    enabler's (invariant 10). A rule's scope chooses the letters it takes, not where it may
    publish them: an unlimited admin's rule over one place may forward into a parking queue
    of any broker, and a rule enabled by someone limited to place A publishes only where they
    may (console.access.guards asks the broker's topology); a rule without an enabler, nowhere."""
    from console.access.actors import RuleActor

    if isinstance(actor, RuleActor):
        return scope_of(actor.user) if actor.user is not None else NOWHERE
    return scope_of(actor)


def _within(scope: Scope, broker: str, place: str) -> Q:
    """Rows whose broker or place, reached by these lookups, the scope allows."""
    return Q(**{f"{broker}__in": scope.brokers}) | Q(**{f"{place}__in": scope.places})


def _all_within(scope: Scope, concerns: QuerySet) -> Q:
    """Rows whose concerns (AuditEventPlace rows, correlated by OuterRef) exist and all lie in
    the scope: one concern outside, or none at all, hides the row (fail closed)."""
    return Q(Exists(concerns)) & ~Q(Exists(concerns.exclude(_within(scope, "broker_id", "place_id"))))


def _narrowed(scope: Scope, queryset: QuerySet) -> QuerySet:
    from console.models import (
        AuditEvent,
        AuditEventPlace,
        Broker,
        DeadLetter,
        DeadPlace,
        Delivery,
        FailureGroupHistory,
        GroupCount,
        GroupNote,
        Job,
        Objective,
        Origin,
        Rule,
        Subscription,
    )

    model = queryset.model
    if model is Broker:
        # A broker with several allowed places would be listed once per place.
        return queryset.filter(_within(scope, "pk", "places__pk")).distinct()
    if model is DeadPlace:
        return queryset.filter(_within(scope, "broker_id", "pk"))
    if model in (DeadLetter, GroupCount):  # a letter, or the count of letters it is part of
        return queryset.filter(_within(scope, "broker_id", "place_id"))
    if model is Job:
        # A job over letters of several places has no place: what its audit events concern
        # says where it acts (console.services.audit.job_concerns).
        acts = AuditEventPlace.objects.filter(event__job_id=OuterRef("pk"))
        return queryset.filter(_within(scope, "place__broker_id", "place_id")
                               | Q(place__isnull=True) & _all_within(scope, acts))
    if model is AuditEvent:
        return queryset.filter(_all_within(scope, AuditEventPlace.objects.filter(event=OuterRef("pk"))))
    if model is Origin:
        # An origin of an allowed broker; or one that letters of an allowed place came from
        # (its name and streak say no more than those letters do).
        from_allowed_place = DeadLetter.objects.filter(
            place_id__in=scope.place_ids, broker_id=OuterRef("broker_id"), place__scope=OuterRef("scope"),
            origin_queue=OuterRef("name"))
        return queryset.filter(Q(broker_id__in=scope.brokers) | Q(Exists(from_allowed_place)))
    if model is Rule:
        # A rule over every place is seen only without limits; one over a broker or a place by
        # those who may act there.
        return queryset.filter(_within(scope, "broker_id", "place_id")
                               | Q(place__broker_id__in=scope.brokers))
    if model is GroupNote:
        # Every place the note carries must be allowed; a place removed since allows no one
        # limited, and a note carrying none is for those without limits (fail closed).
        allowed = list(DeadPlace.objects.filter(_within(scope, "broker_id", "pk")).values_list("pk", flat=True))
        return queryset.filter(places__len__gt=0, places__contained_by=allowed)
    if model in (Subscription, Delivery):
        # One about a place the scope allows; about every place or none: only without limits.
        return queryset.filter(_within(scope, "place__broker_id", "place_id"))
    if model is Objective:
        # One on a place the scope allows, or on an origin the scope shows.
        return queryset.filter(_within(scope, "place__broker_id", "place_id")
                               | Q(origin__in=_narrowed(scope, Origin.objects.all())))
    if model is FailureGroupHistory:
        # The pipeline counts each group over every place at once: there is no part of it a
        # limited user could be shown without the others' counts, origins and brokers.
        return queryset.none()
    raise TypeError(f"no scope is defined for {model.__name__}: add it to console.access.scope")


def visible(user, queryset: QuerySet) -> QuerySet:
    """``queryset`` narrowed to what ``user`` may see: brokers, places, letters, origins, jobs,
    audit events, rules, group notes, subscriptions, deliveries, objectives or failure group
    history."""
    scope = scope_of(user)
    if scope.unlimited:
        return queryset
    return _narrowed(scope, queryset)


#: URL keyword -> the model whose row it names.
_URL_OBJECTS = {"broker_id": "Broker", "place_id": "DeadPlace", "letter_id": "DeadLetter", "job_id": "Job",
                "origin_id": "Origin", "objective_id": "Objective"}


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
