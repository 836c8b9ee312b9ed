"""Job.kind takes its choices from the kind registry (console.jobs.kinds.choices, issue 30):
a callable, so a new kind needs no migration."""

from django.db import migrations, models

import console.jobs.kinds


class Migration(migrations.Migration):
    dependencies = [("console", "0036_body_document")]
    operations = [
        migrations.AlterField(
            model_name="job",
            name="kind",
            field=models.CharField(choices=console.jobs.kinds.choices, max_length=20),
        ),
    ]
