"""Placeholder, reserved for a letter's JSON body as a stored document (issue 29): its owner replaces the operations."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("console", "0035_rule_match_in_database")]
    operations = []
