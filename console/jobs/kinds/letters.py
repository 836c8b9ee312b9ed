"""The base of the kinds that act on a frozen set of letters in custody: replay, move, purge,
mark failed. The letters are ``ids``, a ``filter`` frozen now, or a ``selection`` frozen
earlier by a preview (what the operator saw, never widened by letters that arrived since)."""

from __future__ import annotations

from typing import Any, ClassVar

from django.db.models import Count

from console.access.actors import Actor
from console.jobs.kinds.base import JobKind, P, Plan
from console.services.jobs import JobError, checked_frozen
from console.services.letter_import import masked_and_unconfirmed
from console.services.selection import SelectionError, freeze, resolve


class LettersKind(JobKind[P]):
    inputs: ClassVar[frozenset[str]] = frozenset({"ids", "filter", "selection"})

    def plan(self, params: P, given: dict[str, Any], *, actor: Actor, checked: Any) -> Plan:
        ids, filter_, selection = given.get("ids"), given.get("filter"), given.get("selection")
        try:
            if selection is not None:
                if ids is not None or filter_ is not None:
                    raise SelectionError("give a frozen selection, or ids or a filter, not both")
                selection = checked_frozen(selection)
            else:
                selection = freeze(ids=ids, filter=filter_)
        except SelectionError as exc:
            raise JobError(str(exc)) from None
        per_place = dict(resolve(selection).order_by().values_list("place_id").annotate(letters=Count("id")))
        if not per_place:
            raise JobError("no letters match this selection")
        if self.publishes_to and (masked := masked_and_unconfirmed(resolve(selection)).count()):
            raise JobError(f"{masked} of these letters were imported from an export made by someone who saw them "
                           "masked: their bodies and headers are not what was sent. An admin releases each one "
                           "(confirming it) before it is published")
        return Plan(per_place=per_place, selection=selection,
                    details={"filter": selection.get("filter"), "max_id": selection.get("max_id")})
