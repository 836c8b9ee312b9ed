"""Scope on every read, and scopes that fail closed.

1. ``AuditEventPlace``: the brokers and places each audit event concerns, by id, so a user
   limited to some of them reads only their events. The rows sit beside the events: the hash
   chain and the append-only triggers of 0002/0006 are untouched, and existing events get
   theirs by INSERT alone, no trigger disabled. The new table is append-only too.
   Existing events are matched as record() now matches new ones, from what they kept:
   a named place (broker name + place name, the broker created by then; a place name that
   matches none or several places of that broker stands for the whole broker), else the places
   of the letters they name, else their job's place or the places of the job's other events,
   else a named broker as a whole. Events that name none of these concern nothing and are seen
   only by users without limits.
2. ``RoleScope``: removing a broker or place empties the rows naming it instead of deleting
   them (``SET_NULL``), so a limited user stays limited; ``named`` keeps what a row named.
"""

import django.db.models.deletion
from django.db import migrations, models

APPEND_ONLY = """
CREATE OR REPLACE FUNCTION console_audit_places_append_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' AND current_setting('dlo.allow_audit_truncate', true) = 'on' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'the audit is append-only: % on % is refused', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER console_audit_places_append_only
    BEFORE UPDATE OR DELETE ON console_auditeventplace
    FOR EACH ROW EXECUTE FUNCTION console_audit_places_append_only();
CREATE TRIGGER console_audit_places_no_truncate
    BEFORE TRUNCATE ON console_auditeventplace
    FOR EACH STATEMENT EXECUTE FUNCTION console_audit_places_append_only();
"""

NOT_APPEND_ONLY = """
DROP TRIGGER IF EXISTS console_audit_places_no_truncate ON console_auditeventplace;
DROP TRIGGER IF EXISTS console_audit_places_append_only ON console_auditeventplace;
DROP FUNCTION IF EXISTS console_audit_places_append_only();
"""

BACKFILL = """
-- 1. A named place: the one place of that name on the broker of that name, or the whole broker.
INSERT INTO console_auditeventplace (event_id, broker_id, place_id)
SELECT e.id, b.id, CASE WHEN count(p.id) = 1 THEN min(p.id) END
  FROM console_auditevent e
  JOIN console_broker b ON b.name = e.broker_name AND b.created_at <= e.at
  LEFT JOIN console_deadplace p ON p.broker_id = b.id AND p.name = e.place_name
 WHERE e.place_name <> ''
 GROUP BY e.id, b.id;
-- 2. The places of the letters an event names.
INSERT INTO console_auditeventplace (event_id, broker_id, place_id)
SELECT DISTINCT e.id, l.broker_id, l.place_id
  FROM console_auditevent e
  JOIN console_deadletter l ON l.id = ANY (e.letter_ids)
 WHERE NOT EXISTS (SELECT 1 FROM console_auditeventplace a WHERE a.event_id = e.id);
-- 3. The job's place, else the places of the job's other events.
INSERT INTO console_auditeventplace (event_id, broker_id, place_id)
SELECT e.id, p.broker_id, p.id
  FROM console_auditevent e
  JOIN console_job j ON j.id = e.job_id
  JOIN console_deadplace p ON p.id = j.place_id
 WHERE NOT EXISTS (SELECT 1 FROM console_auditeventplace a WHERE a.event_id = e.id);
INSERT INTO console_auditeventplace (event_id, broker_id, place_id)
SELECT DISTINCT e.id, o.broker_id, o.place_id
  FROM console_auditevent e
  JOIN console_auditevent sibling ON sibling.job_id = e.job_id AND sibling.id <> e.id
  JOIN console_auditeventplace o ON o.event_id = sibling.id
 WHERE e.job_id IS NOT NULL
   AND NOT EXISTS (SELECT 1 FROM console_auditeventplace a WHERE a.event_id = e.id);
-- 4. A named broker, as a whole.
INSERT INTO console_auditeventplace (event_id, broker_id, place_id)
SELECT e.id, b.id, NULL
  FROM console_auditevent e
  JOIN console_broker b ON b.name = e.broker_name AND b.created_at <= e.at
 WHERE NOT EXISTS (SELECT 1 FROM console_auditeventplace a WHERE a.event_id = e.id);
"""

NAMED = """
UPDATE console_rolescope r
   SET named = b.name || ':' || CASE WHEN p.scope IN ('', '/') THEN '' ELSE p.scope || '/' END || p.name
  FROM console_deadplace p JOIN console_broker b ON b.id = p.broker_id
 WHERE r.place_id = p.id;
UPDATE console_rolescope r SET named = b.name
  FROM console_broker b
 WHERE r.broker_id = b.id AND r.place_id IS NULL;
"""


class Migration(migrations.Migration):

    dependencies = [
        ('console', '0017_letter_search_text_prefix'),
    ]

    operations = [
        migrations.CreateModel(
            name='AuditEventPlace',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('broker_id', models.BigIntegerField()),
                ('place_id', models.BigIntegerField(blank=True, null=True)),
                ('event', models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.DO_NOTHING,
                                            related_name='places', to='console.auditevent')),
            ],
        ),
        migrations.RunSQL(BACKFILL, migrations.RunSQL.noop),
        migrations.RunSQL(APPEND_ONLY, NOT_APPEND_ONLY),
        migrations.RemoveConstraint(
            model_name='rolescope',
            name='rolescope_names_broker_or_place',
        ),
        migrations.AddField(
            model_name='rolescope',
            name='named',
            field=models.CharField(blank=True, help_text='The broker or place as it was called when the limit was set',
                                   max_length=700),
        ),
        migrations.AlterField(
            model_name='rolescope',
            name='broker',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL,
                                    related_name='+', to='console.broker'),
        ),
        migrations.AlterField(
            model_name='rolescope',
            name='place',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL,
                                    related_name='+', to='console.deadplace'),
        ),
        migrations.RunSQL(NAMED, migrations.RunSQL.noop),
    ]
