from django.db import migrations


class Migration(migrations.Migration):
    """Placeholder: filled by the work on matching every rule kind in PostgreSQL (issue 29)."""

    dependencies = [("console", "0034_rule_inbox")]

    operations = []
