"""A console that already holds many letters, made in one SQL statement: the scale at which
the crash tests of issue 32 run (a million letters held besides the ones a job works on).

The letters are what a RabbitMQ dead-letter queue leaves (an ``x-death``, a message id in the
properties, a 1 KiB JSON body naming the letter) and are written by PostgreSQL itself
(``generate_series``), a million in well under a minute. ``bare`` skips the letters table's
own triggers (search rows, documents, group counts, the rules' inbox) for filler letters that
no test reads: they make the tables and their indexes as big as a console in use has them.
"""

from __future__ import annotations

from django.db import connection, transaction

from console.models import DeadLetter, DeadPlace

#: The filler of each body, so that a body is about 1 KiB.
PAD = 960

_INSERT = f"""
    INSERT INTO {DeadLetter._meta.db_table} (
        state, state_changed_at, message_id, custody_key, captured_at, origin_address, origin_queue,
        routing_key, reason, death_count, exception_type, exception_message, exception_stack,
        fingerprint, envelope_details, headers, properties, body, body_size, body_erased, replay_id,
        replayed_to, broker_id, place_id, quarantine_reason, replay_count)
    SELECT 'held', now(), id, md5(id), now(), '', %(origin)s, %(origin)s, 'rejected', 1,
           'java.lang.IllegalStateException', 'Order is already closed', '', md5(%(origin)s || (n %% 50)::text),
           '{{}}', jsonb_build_object('x-death', jsonb_build_array(jsonb_build_object(
               'queue', %(origin)s, 'reason', 'rejected', 'count', 1, 'exchange', '',
               'routing-keys', jsonb_build_array(%(origin)s)))),
           jsonb_build_object('message_id', id, 'delivery_mode', 2),
           body, length(body), false, '', '', %(broker)s, %(place)s, '', 0
      FROM (SELECT n, %(prefix)s || lpad(n::text, 7, '0') AS id,
                   convert_to('{{"letter": "' || %(prefix)s || lpad(n::text, 7, '0') || '", "pad": "'
                              || repeat('x', {PAD}) || '"}}', 'UTF8') AS body
              FROM generate_series(%(first)s, %(last)s) AS n) AS numbered
"""


def hold(place: DeadPlace, count: int, *, origin: str, prefix: str = "letter-", first: int = 0,
         bare: bool = False) -> None:
    """``count`` held letters in ``place``, dead in ``origin``, message ids ``prefix`` + a
    seven-digit number from ``first``."""
    table = DeadLetter._meta.db_table
    with connection.cursor() as cursor:
        if bare:  # not in the insert's transaction: its deferred foreign-key checks would be pending
            cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
        try:
            with transaction.atomic():
                cursor.execute(_INSERT, {"origin": origin, "prefix": prefix, "first": first,
                                         "last": first + count - 1, "broker": place.broker_id, "place": place.pk})
        finally:
            if bare:
                cursor.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")
        cursor.execute(f"ANALYZE {table}")
