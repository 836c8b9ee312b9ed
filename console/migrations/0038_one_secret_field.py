"""Placeholder, reserved for one encrypted-secret field (issue 30): its owner replaces the operations."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("console", "0037_job_kind_from_registry")]
    operations = []
