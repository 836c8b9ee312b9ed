"""The letters an admin's body mapping (console.decoders.schemas.Mapping) names, as a query:
the search fill reads them in Python (console.services.search_rows), and their failure groups
may split by a body's value (console.services.group_keys)."""

from __future__ import annotations

from django.db.models import Q

from console.decoders import schemas


def named_by(mapping: schemas.Mapping) -> Q:
    """The letters ``mapping`` names (its place, origin and header value, those that are set)."""
    where = Q()
    if mapping.place_id is not None:
        where &= Q(place_id=mapping.place_id)
    if mapping.origin:
        where &= Q(origin_queue=mapping.origin)
    if mapping.header:
        where &= Q(headers__contains={mapping.header: mapping.header_value})
    return where
