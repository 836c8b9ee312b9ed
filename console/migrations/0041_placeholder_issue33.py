"""Placeholder for issue 33 (OpenID Connect sign-in), filled by that work."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("console", "0040_placeholder_issue32")]
    operations: list = []
