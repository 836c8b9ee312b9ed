"""A capture writes its letters' search rows later: while the capture's connection says so
(``SET dlo.search_later = on``), the insert trigger writes a placeholder per letter (no text,
no headers, ``partial`` so the body filter reads the body itself, ``pending`` so a header filter
reads the letter's own headers), and ``console_letter_search_fill`` writes the real rows after
the capture has committed and acknowledged (console.services.search_rows). Searches stay
complete in between. What a row keeps is written once here (``search_row``)."""

from django.db import migrations, models

TEXT_BYTES = 64 * 1024



def search_row(d: str) -> str:
    """A letter's search columns from its row ``d``: its headers, the escaped text of its
    body's first 64 KiB, whether the body is longer."""
    return (f"{d}.headers, encode(substring({d}.body FROM 1 FOR {TEXT_BYTES}), 'escape'), "
            f"octet_length({d}.body) > {TEXT_BYTES}")


SYNC = f"""
CREATE OR REPLACE FUNCTION console_letter_search_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('dlo.search_later', true) = 'on' THEN
        INSERT INTO console_lettersearch (letter_id, headers, text, partial, pending)
        SELECT id, '{{}}', '', true, true FROM new_letters;
    ELSE
        INSERT INTO console_lettersearch (letter_id, headers, text, partial, pending)
        SELECT d.id, {search_row("d")}, false FROM new_letters AS d;
    END IF;
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION console_letter_search_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE console_lettersearch SET (headers, text, partial, pending) = ({search_row("NEW")}, false)
     WHERE letter_id = NEW.id;
    RETURN NULL;
END $$;
-- Up to ``batch`` placeholders after letter ``after`` made real, in id order (those whose
-- letter is gone deleted); returns how many it took and the highest letter id among them.
-- Each call starts past the last one's rows (``after``): the partial index still lists the
-- rows filled before until a vacuum, and walking them again made every call slower.
CREATE FUNCTION console_letter_search_fill(after bigint, batch integer) RETURNS TABLE (taken bigint, last bigint)
LANGUAGE sql AS $$
    WITH taken AS (
        SELECT letter_id FROM console_lettersearch WHERE pending AND letter_id > after ORDER BY letter_id
         LIMIT batch FOR UPDATE SKIP LOCKED
    ), filled AS (
        -- By primary key, row by row: a join with ``taken`` hashed the whole table each time.
        UPDATE console_lettersearch AS s SET (headers, text, partial, pending) = ({search_row("d")}, false)
          FROM console_deadletter AS d
         WHERE s.letter_id = ANY (ARRAY(SELECT letter_id FROM taken)) AND d.id = s.letter_id
        RETURNING 1
    ), gone AS (
        DELETE FROM console_lettersearch AS s USING taken AS t
         WHERE s.letter_id = t.letter_id AND NOT EXISTS (SELECT FROM console_deadletter AS d WHERE d.id = t.letter_id)
        RETURNING 1
    )
    SELECT count(*), max(letter_id) FROM taken
$$;
"""

UNSYNC = f"""
DROP FUNCTION console_letter_search_fill(bigint, integer);
CREATE OR REPLACE FUNCTION console_letter_search_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO console_lettersearch (letter_id, headers, text, partial)
    SELECT d.id, {search_row("d")} FROM new_letters AS d;
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION console_letter_search_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE console_lettersearch SET (headers, text, partial) = ({search_row("NEW")})
     WHERE letter_id = NEW.id;
    RETURN NULL;
END $$;
"""


class Migration(migrations.Migration):

    dependencies = [
        ('console', '0028_analytics'),
    ]

    operations = [
        migrations.AddField(
            model_name='lettersearch',
            name='pending',
            field=models.BooleanField(default=False),
        ),
        migrations.AddIndex(
            model_name='lettersearch',
            index=models.Index(condition=models.Q(('pending', True)), fields=['letter'], name='letter_search_pending'),
        ),
        migrations.RunSQL(SYNC, reverse_sql=UNSYNC),
    ]
