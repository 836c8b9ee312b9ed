"""Rows inserted by PostgreSQL's COPY: one data stream instead of an INSERT whose SQL text
carries every value (over 1 MiB for 500 letters of 1 KiB, parsed by psycopg and by
PostgreSQL). Ids come from the table's sequence first, so the caller learns them as with
``bulk_create``; no model instance is built (for a thousand letters, ``Model.__init__`` and
field-by-field ``get_db_prep_save`` cost more than the COPY itself)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.db import connection
from django.db.models import Model
from django.utils import timezone


def copy_insert(model: type[Model], rows: Sequence[Mapping[str, Any]]) -> list[int]:
    """Insert ``rows`` into ``model``'s table in the caller's transaction; return their new
    primary keys, in order.

    A row maps field attnames (``place_id``) to values PostgreSQL reads as they are: JSON
    columns take JSON text, binary columns bytes. A field a row leaves out gets its model
    default, the same for every row of the call; ``auto_now`` and ``auto_now_add`` stamps
    get the time of the call."""
    if not rows:
        return []
    meta = model._meta
    given = list(rows[0])
    column_of = {field.attname: field.column for field in meta.concrete_fields}
    missing = [field for field in meta.concrete_fields if field.attname not in given and not field.primary_key]
    defaults = {field.attname: _default(field) for field in missing}
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
                       [meta.db_table, meta.pk.column, len(rows)])
        ids = [pk for (pk,) in cursor.fetchall()]
        names = ", ".join(quote(column_of[name]) for name in [meta.pk.attname, *given, *defaults])
        fixed = list(defaults.values())
        with cursor.cursor.copy(f"COPY {quote(meta.db_table)} ({names}) FROM STDIN") as copy:
            for pk, row in zip(ids, rows):
                copy.write_row([pk, *(row[name] for name in given), *fixed])
    return ids


def _default(field) -> Any:
    if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
        return timezone.now()
    return field.get_db_prep_save(field.get_default(), connection)
