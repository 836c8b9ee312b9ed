"""Issue 34: the trace context of letters (console.tracing.context).

A letter's ``trace_id`` and ``span_id`` are columns of its own, without an index (every index on
the letters table is written again at each change of state); the index the trace filter and a
failure group's count of traces use is on LetterTrace, beside the letter. Its rows are written
by triggers, as the search rows are (migration 0029): at a letter's insert, by any path, when
the letter is traced; but a capture's letters (``dlo.search_later``) get theirs when their
search placeholders are filled after the capture, so a capture's COPY only evaluates a
trigger's WHEN per letter. A letter's trace id is written once, at insert.

Letters already in custody are read here (their headers and properties, not their bodies:
Dramatiq's trace context, in a body, is read for letters captured from now on): about a
minute a million letters that carry trace headers, nothing for those that do not.
"""

import json

import django.db.models.deletion
from django.db import migrations, models

TRIGGERS = """
CREATE FUNCTION console_letter_trace_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO console_lettertrace (letter_id, trace_id, place_id, fingerprint)
    VALUES (NEW.id, NEW.trace_id, NEW.place_id, NEW.fingerprint) ON CONFLICT (letter_id) DO NOTHING;
    RETURN NULL;
END $$;
CREATE TRIGGER console_letter_trace_insert AFTER INSERT ON console_deadletter FOR EACH ROW
    WHEN (NEW.trace_id <> '' AND current_setting('dlo.search_later', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION console_letter_trace_insert();
-- A placeholder made real (the fill after a capture, or a change of the letter's headers).
CREATE FUNCTION console_letter_trace_filled() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO console_lettertrace (letter_id, trace_id, place_id, fingerprint)
    SELECT d.id, d.trace_id, d.place_id, d.fingerprint FROM console_deadletter AS d
     WHERE d.id = NEW.letter_id AND d.trace_id <> '' ON CONFLICT (letter_id) DO NOTHING;
    RETURN NULL;
END $$;
CREATE TRIGGER console_letter_trace_filled AFTER UPDATE OF pending ON console_lettersearch FOR EACH ROW
    WHEN (OLD.pending AND NOT NEW.pending) EXECUTE FUNCTION console_letter_trace_filled();
"""
UNTRIGGERS = """
DROP TRIGGER IF EXISTS console_letter_trace_filled ON console_lettersearch;
DROP FUNCTION IF EXISTS console_letter_trace_filled();
DROP TRIGGER IF EXISTS console_letter_trace_insert ON console_deadletter;
DROP FUNCTION IF EXISTS console_letter_trace_insert();
"""

#: Letters that name a trace header in their headers or properties, in any case.
_NAMING = """EXISTS (SELECT FROM jsonb_object_keys(CASE jsonb_typeof({column}) WHEN 'object' THEN {column}
              ELSE '{{}}'::jsonb END) AS k WHERE lower(k) = ANY (%s))"""
_CHUNK = 2000


def read_existing(apps, schema_editor):
    from console.tracing.context import HEADER_NAMES, read_trace_context

    connection = schema_editor.connection
    after = 0
    while True:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT id, headers::text, properties::text FROM console_deadletter WHERE id > %s AND ("
                + _NAMING.format(column="headers") + " OR " + _NAMING.format(column="properties")
                + ") ORDER BY id LIMIT %s", [after, list(HEADER_NAMES), list(HEADER_NAMES), _CHUNK])
            rows = cursor.fetchall()
            if not rows:
                break
            after = rows[-1][0]
            found = []
            for letter_id, headers, properties in rows:
                trace = read_trace_context(json.loads(headers), json.loads(properties))
                if trace is not None:
                    found.append((letter_id, trace.trace_id, trace.span_id))
            if found:
                cursor.execute(
                    "UPDATE console_deadletter AS d SET trace_id = v.trace_id, span_id = v.span_id "
                    "FROM unnest(%s::bigint[], %s::varchar[], %s::varchar[]) AS v(id, trace_id, span_id) "
                    "WHERE d.id = v.id",
                    [[f[0] for f in found], [f[1] for f in found], [f[2] for f in found]])
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO console_lettertrace (letter_id, trace_id, place_id, fingerprint) "
                       "SELECT id, trace_id, place_id, fingerprint FROM console_deadletter WHERE trace_id <> ''")


class Migration(migrations.Migration):
    dependencies = [("console", "0041_placeholder_issue33")]

    operations = [
        migrations.AddField(
            model_name="deadletter",
            name="span_id",
            field=models.CharField(blank=True, db_default="", default="", max_length=16),
        ),
        migrations.AddField(
            model_name="deadletter",
            name="trace_id",
            field=models.CharField(blank=True, db_default="", default="", max_length=32),
        ),
        migrations.CreateModel(
            name="LetterTrace",
            fields=[
                ("letter", models.OneToOneField(db_constraint=False, on_delete=django.db.models.deletion.CASCADE,
                                                primary_key=True, related_name="+", serialize=False,
                                                to="console.deadletter")),
                ("trace_id", models.CharField(max_length=32)),
                ("fingerprint", models.CharField(blank=True, max_length=32)),
                ("place", models.ForeignKey(db_constraint=False, db_index=False,
                                            on_delete=django.db.models.deletion.DO_NOTHING, related_name="+",
                                            to="console.deadplace")),
            ],
        ),
        migrations.RunPython(read_existing, migrations.RunPython.noop),
        migrations.AddIndex(model_name="lettertrace",
                            index=models.Index(fields=["trace_id"], name="letter_trace_id")),
        migrations.AddIndex(model_name="lettertrace",
                            index=models.Index(fields=["fingerprint", "place", "trace_id"], name="letter_trace_group")),
        migrations.RunSQL(TRIGGERS, reverse_sql=UNTRIGGERS),
    ]
