"""An index that answers the failure groups (console.services.groups) without reading letters:
an index-only scan that arrives already grouped (figures: benchmarks/HISTORY.md, "What keeps it
fast")."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('console', '0003_pipeline_history'),
    ]

    operations = [
        migrations.AddIndex(
            model_name='deadletter',
            index=models.Index(fields=['place', 'state', 'fingerprint'], include=('captured_at', 'origin_queue', 'id'), name='letter_groups'),
        ),
    ]
