"""Keyset paging: a page is "the next N rows after this row", never an offset. By id (newest or
oldest first), or by a column with the id breaking ties (:data:`SORTS`): the row a page
continues after is named by its id, and its column's value read again."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Q, QuerySet

from console.services.parsing import ascii_whole_number

PAGE_SIZE = 50


@dataclass
class Page:
    rows: list[Any]
    #: The id to continue from (``?after=`` or ``?before=``), or None on the last page.
    next_key: int | None
    #: Whether this page starts somewhere past the first row.
    is_continued: bool


def page_key(raw: str | None) -> int | None:
    """The id a page continues from, or None when the query string gives none (or garbage:
    anything but ASCII digits within a bigint, which ``int()`` alone would let through)."""
    return ascii_whole_number(raw) if raw not in (None, "") else None


@dataclass(frozen=True)
class Sort:
    """An order of a list: by ``field`` (None: the id alone), then by id, one way for both."""

    name: str
    label: str
    field: str | None
    descending: bool

    def ordering(self) -> list[str]:
        sign = "-" if self.descending else ""
        return [f"{sign}{self.field}", f"{sign}id"] if self.field else [f"{sign}id"]


#: The orders a list of letters takes (``?sort=``); the first is the default.
SORTS = {sort.name: sort for sort in (
    Sort("newest", "newest first", None, True),
    Sort("oldest", "oldest first", None, False),
    Sort("deaths", "most deaths first", "death_count", True),
    Sort("size", "largest body first", "body_size", True),
    Sort("exception", "exception type, A to Z", "exception_type", False),
)}
NEWEST, OLDEST = SORTS["newest"], SORTS["oldest"]


def sort_named(raw: str | None) -> Sort:
    """The order ``?sort=`` names; newest first for none or a word that names no order."""
    return SORTS.get(raw or "", NEWEST)


def page_sorted(queryset: QuerySet, after: str | None, sort: Sort, size: int | None = None) -> Page:
    """Rows in ``sort``'s order following the row whose id is ``after`` (PAGE_SIZE of them)."""
    size = PAGE_SIZE if size is None else size
    key = page_key(after)
    if key is not None:
        queryset = queryset.filter(_past(queryset, key, sort))
    rows = list(queryset.order_by(*sort.ordering())[: size + 1])
    more = len(rows) > size
    rows = rows[:size]
    return Page(rows, rows[-1].id if more else None, key is not None)


def _past(queryset: QuerySet, key: int, sort: Sort) -> Q:
    """The rows after the row ``key`` in ``sort``'s order (by id alone when that row is gone)."""
    way = "lt" if sort.descending else "gt"
    if sort.field is None:
        return Q(**{f"id__{way}": key})
    value = queryset.model.objects.filter(pk=key).values_list(sort.field, flat=True).first()
    if value is None:
        return Q(**{f"id__{way}": key})
    return Q(**{f"{sort.field}__{way}": value}) | Q(**{sort.field: value, f"id__{way}": key})
