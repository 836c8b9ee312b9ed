"""Search rows written after the capture, not during it.

A capture's batch is committed, then acknowledged on the broker; writing each letter's search
row (its escaped body for the trigram index, its headers for the GIN index) in that same
transaction was half of PostgreSQL's work per letter. Within ``written_later()`` the insert
trigger writes a cheap placeholder instead (migration 0029: no text, ``partial`` and
``pending`` set), and ``fill_search_rows`` makes the placeholders real afterwards, in batches
of their own (the Celery task ``console.fill_search_rows``, queued when a capture ends and run
by beat as well).

Searches are complete meanwhile: a placeholder is ``partial``, so the body filter reads such a
letter's body itself (as it does for bodies longer than the text kept), and ``pending``, so the
header filter reads the letter's own headers (console.services.selection).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from celery import current_app
from django.db import DatabaseError, connection, transaction

log = logging.getLogger(__name__)

#: Placeholders made real per transaction.
FILL_BATCH = 2000


@contextmanager
def written_later() -> Iterator[None]:
    """Letters inserted on this connection meanwhile get placeholder search rows."""
    with connection.cursor() as cursor:
        cursor.execute("SET dlo.search_later = 'on'")
    try:
        yield
    finally:
        try:
            with connection.cursor() as cursor:
                cursor.execute("RESET dlo.search_later")
        except DatabaseError:
            pass  # a broken connection is not reused; a new one starts without the setting


def fill_search_rows(batch: int = FILL_BATCH) -> int:
    """Make every placeholder real (several transactions of ``batch``, in id order); returns
    how many there were."""
    filled, after = 0, 0
    while True:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT taken, last FROM console_letter_search_fill(%s, %s)", [after, batch])
            taken, last = cursor.fetchone()
        if not taken:
            return filled
        filled, after = filled + taken, last


def fill_later() -> None:
    """Have a worker fill the placeholders (console.fill_search_rows); beat does it anyway."""
    try:
        current_app.send_task("console.fill_search_rows")
    except Exception as exc:  # noqa: BLE001 - beat fills them when Celery is back
        log.warning("could not queue the search rows' fill (beat will run it): %s", exc)
