"""Keeping a dead place in custody: the console drains it continuously (console.jobs.automation.keeper),
so its letters are in custody seconds after they die. The flag on the place is what a person
sets; the keeper follows it within a poll. Each change is audited (``place.keep``), and so is
a broker's default for the places discovery finds from now on (``broker.keep_new_places``)."""

from __future__ import annotations

from django.db import transaction

from console.access.actors import Actor
from console.access.guards import guard_places
from console.access.roles import ACT, has, role_holding
from console.access.scope import OutOfScope, scope_of
from console.models import Broker, DeadPlace
from console.refusals import Refusal, require_reason
from console.services import audit


class KeepError(Refusal):
    """A change the console refuses, with a message for the operator."""


def _allowed(actor: Actor) -> None:
    if not has(actor, ACT):
        raise KeepError(f"keeping a place in custody needs the {role_holding(ACT)} role")


@transaction.atomic
def do_keep(place: DeadPlace, keep: bool, *, actor: Actor, reason: str) -> DeadPlace:
    """Turn keeping ``place`` in custody on or off; a change to what it already is writes nothing."""
    _allowed(actor)
    reason = require_reason(reason, KeepError)
    try:
        guard_places(actor, [place.pk])
    except OutOfScope as exc:
        raise KeepError(str(exc)) from None
    place = DeadPlace.objects.select_for_update().select_related("broker").get(pk=place.pk)
    if place.keep_in_custody == keep:
        return place
    place.keep_in_custody = keep
    place.save(update_fields=["keep_in_custody"])
    audit.record("place.keep", actor=actor, reason=reason, place=place, outcome="on" if keep else "off",
                 details={"keep_in_custody": keep})
    return place


@transaction.atomic
def do_keep_new_places(broker: Broker, keep: bool, *, actor: Actor, reason: str) -> Broker:
    """Set whether the places discovery finds on ``broker`` from now on are kept in custody
    (places known already keep their own setting)."""
    _allowed(actor)
    scope = scope_of(actor)
    if not scope.allows(broker.pk, None):
        raise KeepError("only someone who may act on the whole broker sets its default for new places")
    reason = require_reason(reason, KeepError)
    broker = Broker.objects.select_for_update().get(pk=broker.pk)
    if broker.keep_new_places == keep:
        return broker
    broker.keep_new_places = keep
    broker.save(update_fields=["keep_new_places"])
    audit.record("broker.keep_new_places", actor=actor, reason=reason, broker=broker,
                 outcome="on" if keep else "off", details={"keep_new_places": keep})
    return broker
