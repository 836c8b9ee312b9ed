"""PendingAck carries the letter's place and custody key, so matching a redelivered message
reads only the pending rows; the letters table loses its (place, custody_key) index, one index
fewer to write at each change of a letter's state."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('console', '0014_letter_search'),
    ]

    operations = [
        migrations.AddField(
            model_name='pendingack',
            name='place',
            field=models.ForeignKey(null=True, db_index=False, on_delete=django.db.models.deletion.CASCADE,
                                    related_name='+', to='console.deadplace'),
        ),
        migrations.AddField(
            model_name='pendingack',
            name='custody_key',
            field=models.CharField(default='', max_length=64),
            preserve_default=False,
        ),
        migrations.RunSQL(
            "UPDATE console_pendingack p SET place_id = l.place_id, custody_key = l.custody_key "
            "FROM console_deadletter l WHERE l.id = p.letter_id",
            reverse_sql=migrations.RunSQL.noop,
        ),
        migrations.AlterField(
            model_name='pendingack',
            name='place',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+',
                                    to='console.deadplace'),
        ),
        migrations.AddIndex(
            model_name='pendingack',
            index=models.Index(fields=['place', 'custody_key'], name='pending_ack_match'),
        ),
        migrations.RemoveIndex(
            model_name='deadletter',
            name='console_dea_place_i_710a23_idx',
        ),
    ]
