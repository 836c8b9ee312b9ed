"""Keyset pages: ``?cursor=<last id seen>&page_size=N``, answered as ``{"results", "next"}``.

Offsets get slower and skip or repeat rows while letters keep arriving; a keyset page starts
strictly after the last id of the previous one, so walking the ``next`` links returns every
row exactly once. The cursor is the last id of the page (clients may treat it as opaque).
"""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import BasePagination
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param

from console.access.masking import Plain
from console.services.parsing import ascii_whole_number

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 500


def _positive_int(value: str | None, name: str, default: int | None) -> int | None:
    if value in (None, ""):
        return default
    number = ascii_whole_number(value, 0)  # ASCII digits only: int() also reads '٣'
    if number is None:
        raise ValidationError({name: f"must be a positive whole number, got {value!r}"})
    if number < 1:
        raise ValidationError({name: "must be at least 1"})
    return number


def cursor_of(request) -> int | None:
    """The id a keyset page starts after (``?cursor=``), parsed as the pagination parses it."""
    return _positive_int(request.query_params.get("cursor"), "cursor", None)


class KeysetPagination(BasePagination):
    """Pages in ascending id order (oldest first)."""

    descending = False

    def paginate_queryset(self, queryset: Any, request, view=None) -> list:
        self.request = request
        after = _positive_int(request.query_params.get("cursor"), "cursor", None)
        size = min(_positive_int(request.query_params.get("page_size"), "page_size", DEFAULT_PAGE_SIZE)
                   or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
        if after is not None:
            queryset = queryset.filter(id__lt=after) if self.descending else queryset.filter(id__gt=after)
        rows = list(queryset.order_by("-id" if self.descending else "id")[: size + 1])
        self.next_cursor = rows[size - 1].pk if len(rows) > size else None
        return rows[:size]

    def get_next_link(self) -> str | None:
        if self.next_cursor is None:
            return None
        return replace_query_param(self.request.build_absolute_uri(), "cursor", self.next_cursor)

    def get_paginated_response(self, data) -> Response:
        link = self.get_next_link()  # the reader's own query, repeated: masking it would break the walk
        return Response({"results": data, "next": None if link is None else Plain(link)})

    def get_paginated_response_schema(self, schema: dict) -> dict:
        return {
            "type": "object",
            "required": ["results", "next"],
            "properties": {
                "results": schema,
                "next": {"type": "string", "format": "uri", "nullable": True,
                         "description": "The next page, or null on the last page"},
            },
        }

    def get_schema_operation_parameters(self, view) -> list[dict]:
        order = "newest first" if self.descending else "oldest first"
        return [
            {"name": "cursor", "in": "query", "required": False, "schema": {"type": "integer"},
             "description": f"Start after this id ({order}); take it from `next`"},
            {"name": "page_size", "in": "query", "required": False,
             "schema": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE_SIZE,
                        "default": DEFAULT_PAGE_SIZE}},
        ]


class NewestFirstPagination(KeysetPagination):
    """Pages in descending id order (newest first), for the audit and jobs."""

    descending = True
