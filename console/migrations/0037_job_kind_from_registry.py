"""Placeholder, reserved for Job.kind's choices from the kind registry (issue 30): its owner replaces the operations."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("console", "0036_body_document")]
    operations = []
