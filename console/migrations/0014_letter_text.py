"""LetterText: each letter's body as escaped text, kept by triggers, with the trigram index
that body-text search narrows through (see console.models.letter.LetterText for why it is
not an index on the letters table itself)."""

import django.contrib.postgres.indexes
import django.db.models.deletion
from django.db import migrations, models


SYNC = """
CREATE FUNCTION console_letter_text_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO console_lettertext (letter_id, text) VALUES (NEW.id, encode(NEW.body, 'escape'));
    ELSE
        UPDATE console_lettertext SET text = encode(NEW.body, 'escape') WHERE letter_id = NEW.id;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER letter_text_on_insert AFTER INSERT ON console_deadletter
    FOR EACH ROW EXECUTE FUNCTION console_letter_text_sync();
-- Only when the body itself changes: a change of state does not name the body, so it fires nothing.
CREATE TRIGGER letter_text_on_body AFTER UPDATE OF body ON console_deadletter
    FOR EACH ROW WHEN (OLD.body IS DISTINCT FROM NEW.body) EXECUTE FUNCTION console_letter_text_sync();
INSERT INTO console_lettertext (letter_id, text) SELECT id, encode(body, 'escape') FROM console_deadletter;
ANALYZE console_lettertext;  -- the planner's choice between the trigram index and a walk in id order needs it
"""

UNSYNC = """
DROP TRIGGER letter_text_on_body ON console_deadletter;
DROP TRIGGER letter_text_on_insert ON console_deadletter;
DROP FUNCTION console_letter_text_sync();
"""


class Migration(migrations.Migration):

    dependencies = [
        ('console', '0013_letter_place_id_and_pg_trgm'),
    ]

    operations = [
        migrations.CreateModel(
            name='LetterText',
            fields=[
                ('letter', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='+', serialize=False, to='console.deadletter')),
                ('text', models.TextField()),
            ],
            options={
                'indexes': [django.contrib.postgres.indexes.GinIndex(fields=['text'], name='letter_text_trgm', opclasses=['gin_trgm_ops'])],
            },
        ),
        migrations.RunSQL(SYNC, reverse_sql=UNSYNC),
    ]
