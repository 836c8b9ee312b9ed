"""Origins for the letters already in custody (issue 17): capture makes an origin when its first
letter arrives; letters stored before that make theirs here, with no streak (their order and
gaps were never counted) and the breaker closed."""

from django.db import migrations

BACKFILL = """
INSERT INTO console_origin (broker_id, scope, name, streak_exception, streak_same, streak_any,
                            last_arrival_at, breaker_reason)
SELECT l.broker_id, p.scope, l.origin_queue, '', 0, 0, max(l.captured_at), ''
FROM console_deadletter l JOIN console_deadplace p ON p.id = l.place_id
WHERE l.origin_queue <> ''
GROUP BY l.broker_id, p.scope, l.origin_queue
ON CONFLICT (broker_id, scope, name) DO NOTHING
"""


class Migration(migrations.Migration):

    dependencies = [
        ('console', '0021_keep_kind'),
    ]

    operations = [
        migrations.RunSQL(BACKFILL, reverse_sql=migrations.RunSQL.noop),
    ]
