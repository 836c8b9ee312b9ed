"""A channel's target is split into what may be shown and what is a credential (finding 5):
the whole target is kept encrypted in ``target_credentials_encrypted`` when it carries one (a
URL's userinfo, query values, a known webhook host's path), and ``target`` keeps its shown
form, with ``***`` in their place (console.channel_targets). Existing channels' credentials
are moved now; going back puts the whole targets back in ``target``."""

from django.db import migrations, models

from console import secrets
from console.channel_targets import split_target


def move_credentials(apps, schema_editor):
    Channel = apps.get_model("console", "Channel")
    for channel in Channel.objects.filter(target_credentials_encrypted=""):
        shown, hidden = split_target(channel.target)
        if hidden:
            channel.target_credentials_encrypted = secrets.encrypt(channel.target)
            channel.target = shown
            channel.save(update_fields=["target", "target_credentials_encrypted"])


def put_them_back(apps, schema_editor):
    Channel = apps.get_model("console", "Channel")
    for channel in Channel.objects.exclude(target_credentials_encrypted=""):
        channel.target = secrets.decrypt(channel.target_credentials_encrypted)
        channel.target_credentials_encrypted = ""
        channel.save(update_fields=["target", "target_credentials_encrypted"])


class Migration(migrations.Migration):
    dependencies = [("console", "0032_group_note_places")]

    operations = [
        migrations.AddField(
            model_name="channel",
            name="target_credentials_encrypted",
            field=models.TextField(blank=True, help_text="The whole target, encrypted, when it carries credentials (else empty)"),
        ),
        migrations.RunPython(move_credentials, put_them_back),
    ]
