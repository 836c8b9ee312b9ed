"""A failure group's notes carry the places their author could see (GroupNote.places).

Notes written before take them from their own audit row (``group.note``, whose concerns are
exactly the places of the group's letters the author could see: console.services.group_work);
a note no audit row explains keeps none, and only users without limits read it."""

import django.contrib.postgres.fields
from django.db import migrations, models


def places_from_the_audit(apps, schema_editor):
    GroupNote = apps.get_model("console", "GroupNote")
    AuditEvent = apps.get_model("console", "AuditEvent")
    AuditEventPlace = apps.get_model("console", "AuditEventPlace")
    for note in GroupNote.objects.select_related("group").filter(places=[]):
        event = (AuditEvent.objects.filter(action="group.note", details__note=note.pk,
                                           details__fingerprint=note.group.fingerprint)
                 .order_by("id").values_list("pk", flat=True).first())
        if event is None:
            continue
        concerns = list(AuditEventPlace.objects.filter(event_id=event).values_list("place_id", flat=True))
        if concerns and None not in concerns:  # a note's row concerns places, never a whole broker
            note.places = sorted(set(concerns))
            note.save(update_fields=["places"])


class Migration(migrations.Migration):
    dependencies = [("console", "0031_last_job_unconstrained")]

    operations = [
        migrations.AddField(
            model_name="groupnote",
            name="places",
            field=django.contrib.postgres.fields.ArrayField(
                base_field=models.BigIntegerField(), blank=True, default=list,
                help_text="Ids of the places of the group's letters its author could see", size=None),
        ),
        migrations.RunPython(places_from_the_audit, migrations.RunPython.noop),
    ]
