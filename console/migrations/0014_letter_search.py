"""LetterSearch: each letter's headers and body as escaped text, kept by triggers, with the
GIN indexes the header and body-text filters go through (see console.models.letter.LetterSearch
for why they are not indexes on the letters table itself). The rows are filled before the
indexes are built, which is quicker than indexing row by row."""

import django.contrib.postgres.indexes
import django.db.models.deletion
from django.db import migrations, models


SYNC = """
-- Inserts, a statement at a time (a COPY of a thousand letters makes one INSERT here).
CREATE FUNCTION console_letter_search_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO console_lettersearch (letter_id, headers, text)
    SELECT id, headers, encode(body, 'escape') FROM new_letters;
    RETURN NULL;
END $$;
CREATE TRIGGER letter_search_on_insert AFTER INSERT ON console_deadletter
    REFERENCING NEW TABLE AS new_letters FOR EACH STATEMENT EXECUTE FUNCTION console_letter_search_insert();
-- Changes of content (edit, purge) are few, a row at a time. A change of state names neither
-- column, so it fires nothing.
CREATE FUNCTION console_letter_search_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE console_lettersearch SET headers = NEW.headers, text = encode(NEW.body, 'escape')
     WHERE letter_id = NEW.id;
    RETURN NULL;
END $$;
CREATE TRIGGER letter_search_on_content AFTER UPDATE OF body, headers ON console_deadletter
    FOR EACH ROW WHEN (OLD.body IS DISTINCT FROM NEW.body OR OLD.headers IS DISTINCT FROM NEW.headers)
    EXECUTE FUNCTION console_letter_search_update();
INSERT INTO console_lettersearch (letter_id, headers, text)
SELECT id, headers, encode(body, 'escape') FROM console_deadletter;
"""

UNSYNC = """
DROP TRIGGER letter_search_on_content ON console_deadletter;
DROP TRIGGER letter_search_on_insert ON console_deadletter;
DROP FUNCTION console_letter_search_update();
DROP FUNCTION console_letter_search_insert();
"""

# The planner's choice between these indexes and a walk in id order needs statistics.
ANALYZE = "ANALYZE console_lettersearch"


class Migration(migrations.Migration):

    dependencies = [
        ('console', '0013_letter_place_id_and_pg_trgm'),
    ]

    operations = [
        migrations.CreateModel(
            name='LetterSearch',
            fields=[
                ('letter', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='+', serialize=False, to='console.deadletter')),
                ('headers', models.JSONField(default=dict)),
                ('text', models.TextField()),
            ],
        ),
        migrations.RunSQL(SYNC, reverse_sql=UNSYNC),
        migrations.RemoveIndex(
            model_name='deadletter',
            name='letter_headers_gin',
        ),
        migrations.AddIndex(
            model_name='lettersearch',
            index=django.contrib.postgres.indexes.GinIndex(fields=['headers'], name='letter_search_headers', opclasses=['jsonb_path_ops']),
        ),
        migrations.AddIndex(
            model_name='lettersearch',
            index=django.contrib.postgres.indexes.GinIndex(fields=['text'], name='letter_search_text', opclasses=['gin_trgm_ops']),
        ),
        migrations.RunSQL(ANALYZE, reverse_sql=migrations.RunSQL.noop),
    ]
