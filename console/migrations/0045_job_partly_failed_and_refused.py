"""Two more statuses a job never leaves (console.models.Job.FINISHED): ``partly_failed`` and
``refused``. The triggers that act when a job ends (the rules' inbox, 0034; the letters in
flight, 0040) list the finished statuses in their WHEN clause: made again with the new list.
A job refused before this migration was marked cancelled; it becomes refused."""

from django.db import migrations, models

OLD = "'cancelled', 'succeeded', 'failed', 'expired'"
NEW = "'cancelled', 'succeeded', 'partly_failed', 'failed', 'refused', 'expired'"


def triggers(finished: str) -> str:
    return f"""
DROP TRIGGER console_rule_inbox_job_finished ON console_job;
CREATE TRIGGER console_rule_inbox_job_finished AFTER UPDATE OF status ON console_job
    FOR EACH ROW WHEN (NEW.status IN ({finished}) AND OLD.status NOT IN ({finished}))
    EXECUTE FUNCTION console_rule_inbox_job_finished();
DROP TRIGGER console_letter_flight_release ON console_job;
CREATE TRIGGER console_letter_flight_release AFTER UPDATE OF status ON console_job
    FOR EACH ROW WHEN (NEW.status IN ({finished}) AND OLD.status NOT IN ({finished}))
    EXECUTE FUNCTION console_letter_flight_release();
"""


class Migration(migrations.Migration):
    dependencies = [("console", "0044_provider_sessions")]
    operations = [
        migrations.AlterField(
            model_name="job", name="status",
            field=models.CharField(choices=[
                ("queued", "Queued"), ("running", "Running"), ("waiting", "Waiting"), ("paused", "Paused"),
                ("cancelled", "Cancelled"), ("succeeded", "Succeeded"), ("partly_failed", "partly failed"),
                ("failed", "Failed"), ("awaiting_approval", "Awaiting Approval"), ("refused", "Refused"),
                ("expired", "Expired")], default="queued", max_length=20),
        ),
        migrations.RunSQL(triggers(NEW), triggers(OLD)),
        migrations.RunSQL(
            "UPDATE console_job SET status = 'refused' WHERE status = 'cancelled' AND refused_at IS NOT NULL",
            "UPDATE console_job SET status = 'cancelled' WHERE status = 'refused'"),
    ]
