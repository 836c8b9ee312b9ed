"""``bulk_create`` by PostgreSQL's COPY: one data stream instead of an INSERT whose SQL text
carries every value (over 1 MiB for 500 letters of 1 KiB, parsed by psycopg and by
PostgreSQL). Ids come from the table's sequence first, so the objects get their primary keys
as with ``bulk_create``."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection
from django.db.models import Field, JSONField, Model


def copy_create(objs: Sequence[Model]) -> None:
    """Insert ``objs`` (all of one model, none saved yet) and set their primary keys. Runs in
    the caller's transaction; field defaults and ``auto_now_add`` apply as in ``save()``."""
    if not objs:
        return
    meta = type(objs[0])._meta
    fields = list(meta.concrete_fields)
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
                       [meta.db_table, meta.pk.column, len(objs)])
        for obj, (pk,) in zip(objs, cursor.fetchall()):
            obj.pk = pk
        columns = ", ".join(quote(field.column) for field in fields)
        with cursor.cursor.copy(f"COPY {quote(meta.db_table)} ({columns}) FROM STDIN") as copy:
            getters = [_value_getter(field) for field in fields]
            for obj in objs:
                copy.write_row([get(obj) for get in getters])
    for obj in objs:
        obj._state.adding = False
        obj._state.db = connection.alias


def _value_getter(field: Field):
    """What COPY gets for the field: the attribute as it is, except where Django changes it
    on save (JSON adapted, ``auto_now`` stamps). Field by field ``get_db_prep_save`` for every
    column costs more than the COPY itself."""
    if isinstance(field, JSONField) or getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
        return lambda obj: field.get_db_prep_save(field.pre_save(obj, True), connection)
    attname = field.attname
    return lambda obj: getattr(obj, attname)
