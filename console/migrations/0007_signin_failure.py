"""Failed sign-ins, for sign-in rate limiting (console.security.signin)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("console", "0006_audit_no_truncate")]
    operations = [
        migrations.CreateModel(
            name="SignInFailure",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("username", models.CharField(db_index=True, max_length=150)),
                ("ip", models.GenericIPAddressField(blank=True, db_index=True, null=True)),
                ("at", models.DateTimeField(auto_now_add=True, db_index=True)),
            ],
        ),
    ]
