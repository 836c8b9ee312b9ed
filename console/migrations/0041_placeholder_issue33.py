"""Issue 33 (OpenID Connect sign-in): the groups-claim mapping and the provider's identities."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("console", "0040_placeholder_issue32"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="ClaimMapping",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("group", models.CharField(help_text="The claim's value, exactly as the provider sends it",
                                           max_length=255, unique=True)),
                ("role", models.CharField(choices=[("viewer", "viewer"), ("operator", "operator"), ("admin", "admin")],
                                          max_length=20)),
                ("note", models.CharField(blank=True, max_length=500)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
            ],
            options={"ordering": ["group"]},
        ),
        migrations.CreateModel(
            name="ClaimMappingLimit",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("named", models.CharField(blank=True, max_length=700,
                                           help_text="The broker or place as it was called when the limit was set")),
                ("broker", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL,
                                             related_name="+", to="console.broker")),
                ("mapping", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="limits",
                                              to="console.claimmapping")),
                ("place", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL,
                                            related_name="+", to="console.deadplace")),
            ],
        ),
        migrations.CreateModel(
            name="ExternalIdentity",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("issuer", models.CharField(max_length=500)),
                ("subject", models.CharField(max_length=255)),
                ("role", models.CharField(blank=True, max_length=20)),
                ("groups", models.JSONField(blank=True, default=list,
                                            help_text="The claim values that decided the role")),
                ("mappings", models.JSONField(blank=True, default=list, help_text="The mappings that gave it")),
                ("via", models.CharField(blank=True, help_text="sign-in or token", max_length=20)),
                ("applied_at", models.DateTimeField(blank=True, null=True)),
                ("user", models.OneToOneField(on_delete=django.db.models.deletion.CASCADE,
                                              related_name="external_identity", to=settings.AUTH_USER_MODEL)),
            ],
            options={"constraints": [models.UniqueConstraint(fields=("issuer", "subject"),
                                                             name="external_identity_unique")]},
        ),
    ]
