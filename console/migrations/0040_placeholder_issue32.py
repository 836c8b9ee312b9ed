"""A letter being replayed or moved is ``held`` with a LetterFlight (console.models.letter),
no longer ``replaying`` in its own row (issue 32): a replay writes the wide letter row once.

- Letters left ``replaying`` by a job that may still go on get their flight (the job and the
  replay id the mark wrote), then all ``replaying`` letters are ``held`` again.
- When a job ends (any path: its worker, a cancel, an expiry), whatever flights it still has
  (a crash left them) are released: the letter keeps the flight's replay id, so a later replay
  carries the same one, and goes into the rules' inbox, as a letter held again does.
"""

import django.db.models.deletion
from django.db import migrations, models

#: The statuses a job never leaves (console.models.Job.FINISHED as this migration was written).
FINISHED = "'cancelled', 'succeeded', 'failed', 'expired'"

FORWARD = f"""
INSERT INTO console_letterflight (letter_id, job_id, replay_id)
SELECT letter.id, letter.last_job_id, letter.replay_id
  FROM console_deadletter AS letter JOIN console_job AS job ON job.id = letter.last_job_id
 WHERE letter.state = 'replaying' AND job.status NOT IN ({FINISHED});
UPDATE console_deadletter SET state = 'held' WHERE state = 'replaying';

CREATE FUNCTION console_letter_flight_release() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH released AS (
        DELETE FROM console_letterflight WHERE job_id = NEW.id RETURNING letter_id, replay_id
    ), kept AS (
        UPDATE console_deadletter AS letter SET replay_id = released.replay_id
          FROM released WHERE letter.id = released.letter_id AND letter.replay_id = ''
    )
    INSERT INTO console_ruleinbox (letter_id, due_at)
    SELECT letter_id, now() FROM released
    ON CONFLICT (letter_id) DO UPDATE SET due_at = LEAST(console_ruleinbox.due_at, EXCLUDED.due_at),
                                          seq = EXCLUDED.seq;
    RETURN NULL;
END $$;
CREATE TRIGGER console_letter_flight_release AFTER UPDATE OF status ON console_job
    FOR EACH ROW WHEN (NEW.status IN ({FINISHED}) AND OLD.status NOT IN ({FINISHED}))
    EXECUTE FUNCTION console_letter_flight_release();
"""

BACKWARD = """
DROP TRIGGER console_letter_flight_release ON console_job;
DROP FUNCTION console_letter_flight_release();
UPDATE console_deadletter AS letter
   SET state = 'replaying', last_job_id = flight.job_id,
       replay_id = CASE WHEN letter.replay_id = '' THEN flight.replay_id ELSE letter.replay_id END
  FROM console_letterflight AS flight
 WHERE flight.letter_id = letter.id;
"""


class Migration(migrations.Migration):
    dependencies = [("console", "0039_channel_kind_from_registry")]
    operations = [
        migrations.CreateModel(
            name="LetterFlight",
            fields=[
                ("letter", models.OneToOneField(db_constraint=False, on_delete=django.db.models.deletion.CASCADE,
                                                primary_key=True, related_name="flight", serialize=False,
                                                to="console.deadletter")),
                ("replay_id", models.CharField(help_text="Header value of this replay, kept until it is confirmed",
                                               max_length=64)),
                ("job", models.ForeignKey(db_constraint=False, db_index=False,
                                          on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                          to="console.job")),
            ],
        ),
        migrations.RunSQL(FORWARD, BACKWARD),
    ]
