"""Each letter's body as a stored jsonb document (console.models.letter.LetterDocument), with a
GIN index (jsonb_path_ops), for the rules' body paths: containment (``@>``) finds the letters
that may hold a value at a path, and the match is decided on the stored document. Migration
0035 evaluated a body path by parsing each body in the query, which at a million letters took
seconds for a value many letters hold.

The search-row triggers of migration 0029 write the documents too (one function writes a
letter's derived rows, whatever the path): at insert (but a capture's placeholders, whose
documents the fill writes with their search rows after the capture, as console.services.
search_rows says), and at every change of body or headers. Existing letters get theirs here,
before the index is built (quicker than indexing row by row): about a minute a million JSON
bodies of 1 KiB, the time jsonb takes to parse them."""

from importlib import import_module

import django.contrib.postgres.indexes
import django.db.models.deletion
from django.db import migrations, models

search_later = import_module("console.migrations.0029_search_later")
search_row = search_later.search_row

DOCUMENT = "console_body_json({d}.body)"

SYNC = f"""
CREATE OR REPLACE FUNCTION console_letter_search_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('dlo.search_later', true) = 'on' THEN
        INSERT INTO console_lettersearch (letter_id, headers, text, partial, pending)
        SELECT id, '{{}}', '', true, true FROM new_letters;
    ELSE
        INSERT INTO console_lettersearch (letter_id, headers, text, partial, pending)
        SELECT d.id, {search_row("d")}, false FROM new_letters AS d;
        INSERT INTO console_letterdocument (letter_id, document)
        SELECT d.id, {DOCUMENT.format(d="d")} FROM new_letters AS d;
    END IF;
    RETURN NULL;
END $$;
-- The document is written whether the body or the headers changed: a change of headers makes
-- a placeholder's search row real, and a letter with a real search row has its document.
CREATE OR REPLACE FUNCTION console_letter_search_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE console_lettersearch SET (headers, text, partial, pending) = ({search_row("NEW")}, false)
     WHERE letter_id = NEW.id;
    INSERT INTO console_letterdocument (letter_id, document) VALUES (NEW.id, {DOCUMENT.format(d="NEW")})
        ON CONFLICT (letter_id) DO UPDATE SET document = EXCLUDED.document;
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION console_letter_search_fill(after bigint, batch integer) RETURNS TABLE (taken bigint, last bigint)
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
    ), documents AS (
        INSERT INTO console_letterdocument (letter_id, document)
        SELECT d.id, {DOCUMENT.format(d="d")} FROM console_deadletter AS d
         WHERE d.id = ANY (ARRAY(SELECT letter_id FROM taken))
            ON CONFLICT (letter_id) DO UPDATE SET document = EXCLUDED.document
        RETURNING 1
    ), gone AS (
        DELETE FROM console_lettersearch AS s USING taken AS t
         WHERE s.letter_id = t.letter_id AND NOT EXISTS (SELECT FROM console_deadletter AS d WHERE d.id = t.letter_id)
        RETURNING 1
    )
    SELECT count(*), max(letter_id) FROM taken
$$;
INSERT INTO console_letterdocument (letter_id, document)
SELECT d.id, {DOCUMENT.format(d="d")} FROM console_deadletter AS d;
ANALYZE console_letterdocument;
"""


class Migration(migrations.Migration):
    dependencies = [("console", "0035_rule_match_in_database")]

    operations = [
        migrations.CreateModel(
            name="LetterDocument",
            fields=[
                ("letter", models.OneToOneField(db_constraint=False, on_delete=django.db.models.deletion.CASCADE,
                                                primary_key=True, related_name="+", serialize=False,
                                                to="console.deadletter")),
                ("document", models.JSONField(null=True)),
            ],
        ),
        migrations.RunSQL(SYNC, reverse_sql=search_later.SYNC.replace("CREATE FUNCTION console_letter_search_fill",
                                                                       "CREATE OR REPLACE FUNCTION console_letter_search_fill")),
        migrations.AddIndex(
            model_name="letterdocument",
            index=django.contrib.postgres.indexes.GinIndex(fields=["document"], name="letter_document_values",
                                                           opclasses=["jsonb_path_ops"]),
        ),
    ]
