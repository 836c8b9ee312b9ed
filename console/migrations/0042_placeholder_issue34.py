"""Placeholder for issue 34 (trace context of letters), filled by that work."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("console", "0041_placeholder_issue33")]
    operations: list = []
