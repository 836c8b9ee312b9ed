"""Many saved views decided over a batch of letters in one pass (issue 51), as a rule set is
(console.services.rules.matching.matching_each): each view's filter becomes one condition on a
letter, and one query over the batch answers every condition at once. A query per view walked
the batch once per view (50 subscribed views over 2,000 new letters: 1.3 s, most of it in the
queries).

A view's condition is what console.services.selection makes of its filter (one way to read a
filter), taken from the query it builds on the letters table alone. A filter that needs more
than that is decided over the batch by a query of its own: one that reads another table by a
join, or a body search, whose decoded bodies are read in Python over what the query is built on
(the batch, never the whole table)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db.models import ExpressionWrapper

from console.models import DeadLetter, SavedView
from console.services.rules.matching import without_jit
from console.services.saved_views import filter_condition, letters_filter
from console.services.selection import filter_letters

#: Filter keys decided by a query of their own over the batch (see the module).
OWN_QUERY_KEYS = frozenset({"q"})


def matching_views(views: Sequence[SavedView], letter_ids: Iterable[int]) -> dict[int, set[int]]:
    """For each view (by id), the ids among ``letter_ids`` its filter takes (before any reader's
    scope or masks: the caller narrows them to what each reader may see)."""
    ids = list(letter_ids)
    batch = DeadLetter.objects.filter(id__any=ids)
    found: dict[int, set[int]] = {view.pk: set() for view in views}
    if not ids or not views:
        return found
    conditions: dict[str, ExpressionWrapper[Any]] = {}
    for view in views:
        f = letters_filter(view)
        condition = None if OWN_QUERY_KEYS & set(f) else filter_condition(f, DeadLetter)
        if condition is None:  # a body search, or a join: a query of its own over the batch
            found[view.pk] = set(filter_letters(f, batch).values_list("id", flat=True))
        else:
            conditions[f"view_{view.pk}"] = condition
    if conditions:
        rows = batch.annotate(**conditions).order_by().values_list("id", *conditions)
        with without_jit():
            for letter_id, *taken in rows.iterator(chunk_size=5000):
                for name, yes in zip(conditions, taken, strict=True):
                    if yes:
                        found[int(name.removeprefix("view_"))].add(letter_id)
    return found

