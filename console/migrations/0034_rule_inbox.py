from django.db import migrations


class Migration(migrations.Migration):
    """Placeholder: filled by the work on deciding each letter once (issue 29)."""

    dependencies = [("console", "0033_channel_target_credentials")]

    operations = []
