"""One encrypted-secret field (issue 30): no column changes. A broker's password and a channel's
secret and target credentials are read and written through console.secrets.encrypted_secret, a
property over the same text columns, so the tokens already stored are read as before."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("console", "0037_job_kind_from_registry")]
    operations = []
