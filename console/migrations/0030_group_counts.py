"""Failure groups counted by the database (console.models.GroupCount): statement triggers on
the letters table add a row of +n or -n per place, broker, state, fingerprint, origin queue and
UTC day of capture for every insert, delete, and update that moves letters from one such key to
another, by any path (COPY included), in the statement's own transaction; a TRUNCATE of the
letters empties the counts. The letters already there are counted once here. ``letter_groups`` is re-keyed so that a group's first and last
letters in a place and state are the ends of the index."""

import django.db.models.deletion
from django.db import migrations, models


#: The columns a count is kept by, as the letters table names them.
KEY = "place_id, broker_id, state, fingerprint, origin_queue"
DAY = "(captured_at AT TIME ZONE 'UTC')::date"

TRIGGERS = f"""
CREATE FUNCTION console_group_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO console_groupcount ({KEY}, day, letters)
        SELECT {KEY}, {DAY}, count(*) FROM new_letters GROUP BY {KEY}, {DAY};
    ELSIF TG_OP = 'TRUNCATE' THEN
        DELETE FROM console_groupcount;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO console_groupcount ({KEY}, day, letters)
        SELECT {KEY}, {DAY}, -count(*) FROM old_letters GROUP BY {KEY}, {DAY};
    ELSE
        -- Letters whose key did not change cancel out; only moves are written.
        INSERT INTO console_groupcount ({KEY}, day, letters)
        SELECT {KEY}, day, sum(n) FROM (
            SELECT {KEY}, {DAY} AS day, -1 AS n FROM old_letters
            UNION ALL
            SELECT {KEY}, {DAY}, 1 FROM new_letters
        ) AS moved GROUP BY {KEY}, day HAVING sum(n) <> 0;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER console_group_count_insert AFTER INSERT ON console_deadletter
    REFERENCING NEW TABLE AS new_letters FOR EACH STATEMENT EXECUTE FUNCTION console_group_count();
CREATE TRIGGER console_group_count_update AFTER UPDATE ON console_deadletter
    REFERENCING OLD TABLE AS old_letters NEW TABLE AS new_letters FOR EACH STATEMENT EXECUTE FUNCTION console_group_count();
CREATE TRIGGER console_group_count_delete AFTER DELETE ON console_deadletter
    REFERENCING OLD TABLE AS old_letters FOR EACH STATEMENT EXECUTE FUNCTION console_group_count();
CREATE TRIGGER console_group_count_truncate AFTER TRUNCATE ON console_deadletter
    FOR EACH STATEMENT EXECUTE FUNCTION console_group_count();
INSERT INTO console_groupcount ({KEY}, day, letters)
SELECT {KEY}, {DAY}, count(*) FROM console_deadletter GROUP BY {KEY}, {DAY};
"""

UNTRIGGERS = """
DROP TRIGGER console_group_count_insert ON console_deadletter;
DROP TRIGGER console_group_count_update ON console_deadletter;
DROP TRIGGER console_group_count_delete ON console_deadletter;
DROP TRIGGER console_group_count_truncate ON console_deadletter;
DROP FUNCTION console_group_count();
"""


class Migration(migrations.Migration):

    dependencies = [
        ('console', '0029_search_later'),
    ]

    operations = [
        migrations.CreateModel(
            name='GroupCount',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('state', models.CharField(max_length=16)),
                ('fingerprint', models.CharField(max_length=32)),
                ('origin_queue', models.CharField(max_length=500)),
                ('day', models.DateField(help_text='The UTC day the letters were captured')),
                ('letters', models.BigIntegerField(help_text='Letters added (or, below zero, taken away)')),
            ],
        ),
        migrations.RemoveIndex(
            model_name='deadletter',
            name='letter_groups',
        ),
        migrations.AddIndex(
            model_name='deadletter',
            index=models.Index(fields=['place', 'state', 'fingerprint', 'captured_at', 'id'], include=('origin_queue',), name='letter_groups'),
        ),
        migrations.AddField(
            model_name='groupcount',
            name='broker',
            field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='console.broker'),
        ),
        migrations.AddField(
            model_name='groupcount',
            name='place',
            field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='console.deadplace'),
        ),
        migrations.AddIndex(
            model_name='groupcount',
            index=models.Index(fields=['place', 'state', 'fingerprint'], name='group_count_key'),
        ),
        migrations.RunSQL(TRIGGERS, UNTRIGGERS),
    ]
