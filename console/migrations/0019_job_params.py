"""A job's parameters move into one JSON field owned by its kind (console.jobs.kinds): the
columns target, rate_limit, concurrency, canary_size, canary_wait_seconds and
return_threshold go, and so does a capture's limit inside ``selection``. ``per_place`` keeps
what each job was asked to touch per dead place, which the approval rule sums per requester."""

from django.db import migrations, models

# Each column's value is kept under its own name, left out when it held the default.
TO_PARAMS = """
UPDATE console_job SET params = jsonb_strip_nulls(jsonb_build_object(
    'target', NULLIF(target, ''),
    'rate_limit', rate_limit,
    'concurrency', NULLIF(concurrency, 1),
    'canary_size', canary_size,
    'canary_wait_seconds', CASE WHEN canary_size IS NULL THEN NULL ELSE canary_wait_seconds END,
    'return_threshold', return_threshold,
    'limit', CASE WHEN kind = 'capture' THEN selection->'limit' END
));
UPDATE console_job SET selection = selection - 'limit' WHERE kind = 'capture';
UPDATE console_job SET per_place = jsonb_build_object(place_id::text, total) WHERE place_id IS NOT NULL;
"""

FROM_PARAMS = """
UPDATE console_job SET
    target = COALESCE(params->>'target', ''),
    rate_limit = (params->>'rate_limit')::int,
    concurrency = COALESCE((params->>'concurrency')::smallint, 1),
    canary_size = (params->>'canary_size')::int,
    canary_wait_seconds = COALESCE((params->>'canary_wait_seconds')::int, 30),
    return_threshold = (params->>'return_threshold')::float,
    selection = CASE WHEN kind = 'capture' AND params ? 'limit'
                     THEN selection || jsonb_build_object('limit', params->'limit') ELSE selection END;
"""


class Migration(migrations.Migration):
    dependencies = [("console", "0018_scope_on_every_read")]

    operations = [
        migrations.AddField(model_name="job", name="params",
                            field=models.JSONField(blank=True, default=dict,
                                                   help_text="The kind's parameters (console.jobs.kinds)")),
        migrations.AddField(model_name="job", name="per_place",
                            field=models.JSONField(blank=True, default=dict,
                                                   help_text="Letters asked for per dead place id (null: not known)")),
        migrations.RunSQL(TO_PARAMS, FROM_PARAMS),
        migrations.RemoveField(model_name="job", name="target"),
        migrations.RemoveField(model_name="job", name="rate_limit"),
        migrations.RemoveField(model_name="job", name="concurrency"),
        migrations.RemoveField(model_name="job", name="canary_size"),
        migrations.RemoveField(model_name="job", name="canary_wait_seconds"),
        migrations.RemoveField(model_name="job", name="return_threshold"),
        migrations.AlterField(
            model_name="job", name="kind",
            field=models.CharField(choices=[("capture", "Capture"), ("replay", "Replay"), ("move", "Move"),
                                            ("purge", "Purge"), ("mark_failed", "Mark Failed"),
                                            ("archive_replay", "Archive Replay"), ("shovel", "Shovel"),
                                            ("edit_replay", "Edit and replay")], max_length=20)),
        migrations.AlterField(
            model_name="job", name="place",
            field=models.ForeignKey(blank=True, null=True, on_delete=models.deletion.SET_NULL,
                                    to="console.deadplace",
                                    help_text="The one dead place the job acts on, when there is one")),
    ]
