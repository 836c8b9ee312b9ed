from django.db import migrations


class Migration(migrations.Migration):
    """Placeholder: filled by the work on notes scoped to the places their author could see."""

    dependencies = [("console", "0031_last_job_unconstrained")]

    operations = []
