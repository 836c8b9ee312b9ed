"""Rows inserted by PostgreSQL's COPY: one data stream instead of an INSERT whose SQL text
carries every value (over 1 MiB for 500 letters of 1 KiB, parsed by psycopg and by
PostgreSQL). Ids come from the table's sequence first, so the caller learns them as with
``bulk_create``; no model instance is built (for a thousand letters, ``Model.__init__`` and
field-by-field ``get_db_prep_save`` cost more than the COPY itself).

The COPY is binary: a body goes as its bytes, not as hex text that psycopg writes and
PostgreSQL parses back (a third of the CPU of a text COPY of letters of 1 KiB).

A few small rows (FEW_ROWS, FEW_BYTES: a keeper's take of letters trickling in, its audit events) go
as one INSERT ... RETURNING instead: a COPY costs three round trips (the ids, the data, its
end), each holding the interpreter lock while libpq flushes."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from django.db import connection
from django.db.backends.utils import CursorWrapper
from django.db.models import Field, JSONField, Model
from django.utils import timezone
from psycopg import adapters
from psycopg.adapt import Dumper
from psycopg.pq import Format

#: Rows, and bytes of text and binary values in them, up to which one INSERT costs less than a
#: COPY (an INSERT carries its values as text in its SQL, a body's bytes as hex).
FEW_ROWS = 10
FEW_BYTES = 256 * 1024


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
    pk = meta.pk
    if pk is None:  # an abstract model's: nothing can be inserted into it
        raise TypeError(f"{model.__name__} has no table to insert into")
    given = list(rows[0])
    column_of = {field.attname: field.column for field in meta.concrete_fields if field.column is not None}
    missing = [field for field in meta.concrete_fields if field.attname not in given and not field.primary_key]
    defaults = {field.attname: _default(field) for field in missing}
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        column_type = _column_types(cursor, meta.db_table)
        fixed = list(defaults.values())
        if len(rows) <= FEW_ROWS and _size(rows) <= FEW_BYTES:
            return _insert_values(cursor, meta.db_table, column_of[pk.attname],
                                  [column_of[name] for name in [*given, *defaults]], column_type,
                                  [[*(row[name] for name in given), *fixed] for row in rows])
        cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
                       [meta.db_table, pk.column, len(rows)])
        ids = [new_id for (new_id,) in cursor.fetchall()]
        columns = [column_of[name] for name in [pk.attname, *given, *defaults]]
        cursor.cursor.adapters.register_dumper(None, _JsonText)
        names = ", ".join(quote(column) for column in columns)
        with cursor.cursor.copy(f"COPY {quote(meta.db_table)} ({names}) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types([column_type[column][0] for column in columns])
            for new_id, row in zip(ids, rows, strict=True):
                copy.write_row([new_id, *(row[name] for name in given), *fixed])
    return ids


def _size(rows: Sequence[Mapping[str, Any]]) -> int:
    return sum(len(value) for row in rows for value in row.values() if isinstance(value, bytes | str))


def _insert_values(cursor: CursorWrapper, table: str, pk: str, columns: list[str],
                   column_type: dict[str, tuple[int, str]], values: list[list[Any]]) -> list[int]:
    """A few rows as one INSERT, each value cast to its column's type (so JSON text is read as
    JSON, as the COPY reads it), the ids as PostgreSQL's RETURNING gives them, in order."""
    quote = connection.ops.quote_name
    one = "(" + ", ".join(f"%s::{column_type[column][1]}" for column in columns) + ")"
    cursor.execute(f"INSERT INTO {quote(table)} ({', '.join(quote(column) for column in columns)}) "
                   f"VALUES {', '.join([one] * len(values))} RETURNING {quote(pk)}",
                   [value for row in values for value in row])
    return [new_id for (new_id,) in cursor.fetchall()]


def _default(field: Field[Any, Any]) -> Any:
    if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
        return timezone.now()
    if isinstance(field, JSONField):
        return json.dumps(field.get_default(), cls=field.encoder)
    return field.get_db_prep_save(field.get_default(), connection)


_types: dict[str, dict[str, tuple[int, str]]] = {}


def _column_types(cursor: CursorWrapper, table: str) -> dict[str, tuple[int, str]]:
    """Each column's type, its oid (which a binary COPY must name) and its name (what an
    INSERT casts to); asked once a process."""
    if table not in _types:
        cursor.execute("SELECT attname, atttypid, atttypid::regtype::text FROM pg_attribute "
                       "WHERE attrelid = %s::regclass AND attnum > 0", [connection.ops.quote_name(table)])
        _types[table] = {name: (oid, type_name) for name, oid, type_name in cursor.fetchall()}
    return _types[table]


class _JsonText(Dumper):
    """JSON text, as rows give it, in jsonb's binary form (a version byte, then the text)."""

    format = Format.BINARY
    oid = adapters.types["jsonb"].oid

    def dump(self, obj: str) -> bytes:
        return b"\x01" + obj.encode()
