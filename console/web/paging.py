"""Keyset paging by id: a page is "the next N rows after this id", never an offset."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

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


def page_after(queryset: QuerySet, after: str | None, size: int = PAGE_SIZE) -> Page:
    """Rows in ascending id order following ``after``."""
    key = page_key(after)
    if key is not None:
        queryset = queryset.filter(id__gt=key)
    rows = list(queryset.order_by("id")[: size + 1])
    more = len(rows) > size
    rows = rows[:size]
    return Page(rows, rows[-1].id if more else None, key is not None)


def page_before(queryset: QuerySet, before: str | None, size: int = PAGE_SIZE) -> Page:
    """Rows in descending id order (newest first) preceding ``before``."""
    key = page_key(before)
    if key is not None:
        queryset = queryset.filter(id__lt=key)
    rows = list(queryset.order_by("-id")[: size + 1])
    more = len(rows) > size
    rows = rows[:size]
    return Page(rows, rows[-1].id if more else None, key is not None)
