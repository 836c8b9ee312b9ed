"""The inbox of letters the rules are to decide (console.models.RuleInbox,
console.services.rule_inbox), so that a round decides what is new or due, not every held
letter. What the database puts in it, by any path and in the changing statement's transaction:

- letters inserted ``held`` (capture's COPY included): one statement per inserted batch;
- a letter whose state goes back to ``held`` (a replay the broker refused): one row each,
  filtered by the trigger's WHEN, so other changes of state pay nothing;
- the letters still held of a rule's job when the job finishes (the handling rows naming it).

The rest (a rule-set change, a release, a breaker closed, a ladder's next try, an age a rule
waits for) is put by the services that make those changes. Held letters stored before this
migration are put in once, when an enabled rule could take them.
"""

from django.db import migrations, models

#: The statuses a job never leaves (console.models.Job.FINISHED as this migration was written; a
#: migration does not import the models, which change after it).
FINISHED = "'cancelled', 'succeeded', 'failed', 'expired'"

#: A put: a letter already in the inbox keeps the earlier of its two times and a new ``seq``.
UPSERT = ("ON CONFLICT (letter_id) DO UPDATE SET due_at = LEAST(console_ruleinbox.due_at, EXCLUDED.due_at), "
          "seq = EXCLUDED.seq")

TRIGGERS = f"""
CREATE SEQUENCE console_ruleinbox_seq;
ALTER TABLE console_ruleinbox ALTER COLUMN seq SET DEFAULT nextval('console_ruleinbox_seq');

CREATE FUNCTION console_rule_inbox_arrivals() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO console_ruleinbox (letter_id, due_at)
    SELECT id, now() FROM new_letters WHERE state = 'held'
    {UPSERT};
    RETURN NULL;
END $$;
CREATE TRIGGER console_rule_inbox_arrivals AFTER INSERT ON console_deadletter
    REFERENCING NEW TABLE AS new_letters FOR EACH STATEMENT EXECUTE FUNCTION console_rule_inbox_arrivals();

CREATE FUNCTION console_rule_inbox_held_again() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO console_ruleinbox (letter_id, due_at) VALUES (NEW.id, now())
    {UPSERT};
    RETURN NULL;
END $$;
CREATE TRIGGER console_rule_inbox_held_again AFTER UPDATE OF state ON console_deadletter
    FOR EACH ROW WHEN (NEW.state = 'held' AND OLD.state <> 'held')
    EXECUTE FUNCTION console_rule_inbox_held_again();

CREATE FUNCTION console_rule_inbox_job_finished() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO console_ruleinbox (letter_id, due_at)
    SELECT h.letter_id, now()
      FROM console_letterhandling AS h JOIN console_deadletter AS d ON d.id = h.letter_id
     WHERE h.job_id = NEW.id AND d.state = 'held' AND NOT h.held
    {UPSERT};
    RETURN NULL;
END $$;
CREATE TRIGGER console_rule_inbox_job_finished AFTER UPDATE OF status ON console_job
    FOR EACH ROW WHEN (NEW.status IN ({FINISHED}) AND OLD.status NOT IN ({FINISHED}))
    EXECUTE FUNCTION console_rule_inbox_job_finished();

INSERT INTO console_ruleinbox (letter_id, due_at)
SELECT d.id, GREATEST(now(), h.next_at)
  FROM console_deadletter AS d LEFT JOIN console_letterhandling AS h ON h.letter_id = d.id
 WHERE d.state = 'held' AND NOT coalesce(h.held, false)
   AND EXISTS (SELECT 1 FROM console_rule WHERE enabled AND deleted_at IS NULL);
"""

UNTRIGGERS = """
DROP TRIGGER console_rule_inbox_arrivals ON console_deadletter;
DROP TRIGGER console_rule_inbox_held_again ON console_deadletter;
DROP TRIGGER console_rule_inbox_job_finished ON console_job;
DROP FUNCTION console_rule_inbox_arrivals();
DROP FUNCTION console_rule_inbox_held_again();
DROP FUNCTION console_rule_inbox_job_finished();
ALTER TABLE console_ruleinbox ALTER COLUMN seq DROP DEFAULT;
DROP SEQUENCE console_ruleinbox_seq;
"""


class Migration(migrations.Migration):

    dependencies = [("console", "0033_channel_target_credentials")]

    operations = [
        migrations.CreateModel(
            name="RuleInbox",
            fields=[
                ("letter_id", models.BigIntegerField(primary_key=True, serialize=False)),
                ("due_at", models.DateTimeField()),
                ("seq", models.BigIntegerField(help_text="From the sequence console_ruleinbox_seq, new at every put")),
            ],
            options={
                "indexes": [models.Index(fields=["due_at"], name="rule_inbox_due")],
            },
        ),
        migrations.RunSQL(TRIGGERS, UNTRIGGERS),
    ]
