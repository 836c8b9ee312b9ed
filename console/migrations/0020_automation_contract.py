"""What the console needs to work by itself (issue 17): places kept in custody (and a broker's
default for new ones), a letter's lineage replay count and quarantine, and origins with their breaker."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('console', '0019_job_params'),
    ]

    operations = [
        migrations.AddField(
            model_name='broker',
            name='keep_new_places',
            field=models.BooleanField(default=False, help_text='Places discovered from now on are kept in custody (DeadPlace.keep_in_custody)'),
        ),
        migrations.AddField(
            model_name='deadletter',
            name='quarantine_reason',
            field=models.CharField(blank=True, max_length=500),
        ),
        migrations.AddField(
            model_name='deadletter',
            name='quarantined_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='deadletter',
            name='replay_count',
            field=models.IntegerField(default=0, help_text="How many times the console replayed this message's lineage before it came back as this letter (the parent's count plus one; 0 for a first death)"),
        ),
        migrations.AddField(
            model_name='deadplace',
            name='keep_in_custody',
            field=models.BooleanField(default=False, help_text='Drained continuously by the keeper (console.jobs.keeper): letters are in custody seconds after they die'),
        ),
        migrations.CreateModel(
            name='Origin',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('scope', models.CharField(blank=True, help_text='vhost, stream or namespace', max_length=500)),
                ('name', models.CharField(max_length=500)),
                ('streak_exception', models.CharField(blank=True, help_text='The exception type of the latest letters in a row', max_length=500)),
                ('streak_same', models.IntegerField(default=0, help_text='Letters in a row with streak_exception')),
                ('streak_any', models.IntegerField(default=0, help_text='Letters in a row with any exception')),
                ('last_arrival_at', models.DateTimeField(blank=True, null=True)),
                ('breaker_opened_at', models.DateTimeField(blank=True, null=True)),
                ('breaker_reason', models.CharField(blank=True, max_length=500)),
                ('broker', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='origins', to='console.broker')),
            ],
            options={
                'ordering': ['broker__name', 'scope', 'name'],
                'constraints': [models.UniqueConstraint(fields=('broker', 'scope', 'name'), name='origin_unique_per_broker')],
            },
        ),
    ]
