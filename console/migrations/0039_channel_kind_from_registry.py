"""Channel.kind takes its choices from the channel kind registry
(console.notifications.registry.kind_choices, issue 30), as Job.kind takes its own from the job
kinds: a callable, so a new channel kind needs no migration."""

from django.db import migrations, models

import console.notifications.registry


class Migration(migrations.Migration):
    dependencies = [("console", "0038_one_secret_field")]
    operations = [
        migrations.AlterField(
            model_name="channel",
            name="kind",
            field=models.CharField(choices=console.notifications.registry.kind_choices, max_length=20),
        ),
    ]
