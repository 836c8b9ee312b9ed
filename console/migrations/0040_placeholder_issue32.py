"""Placeholder for issue 32 (replay at half the broker's speed), filled by that work."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("console", "0039_channel_kind_from_registry")]
    operations: list = []
