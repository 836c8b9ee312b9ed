"""The pipeline's history tables (failure groups, daily counts, lake watermarks) and the
archive_replay job kind."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('console', '0002_audit_append_only'),
    ]

    operations = [
        migrations.CreateModel(
            name='FailureGroupHistory',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('fingerprint', models.CharField(max_length=32, unique=True)),
                ('exception_type', models.CharField(blank=True, max_length=500)),
                ('reason', models.CharField(blank=True, max_length=50)),
                ('sample_message', models.TextField(blank=True, help_text="Exception message of the group's first letter")),
                ('count', models.BigIntegerField(default=0)),
                ('first_seen', models.DateTimeField()),
                ('last_seen', models.DateTimeField()),
                ('origins', models.JSONField(blank=True, default=list, help_text='Origin subscriptions, sorted')),
                ('brokers', models.JSONField(blank=True, default=list)),
                ('consumers', models.JSONField(blank=True, default=list, help_text='Consumers named by framework headers')),
                ('hosts', models.JSONField(blank=True, default=list, help_text='Servers named by framework headers')),
                ('computed_at', models.DateTimeField()),
            ],
            options={
                'verbose_name_plural': 'failure group histories',
                'ordering': ['-count', 'fingerprint'],
            },
        ),
        migrations.AlterField(
            model_name='job',
            name='kind',
            field=models.CharField(choices=[('capture', 'Capture'), ('replay', 'Replay'), ('move', 'Move'), ('purge', 'Purge'), ('mark_failed', 'Mark Failed'), ('archive_replay', 'Archive Replay')], max_length=20),
        ),
        migrations.CreateModel(
            name='LakeWatermark',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('lake', models.CharField(max_length=1000)),
                ('dataset', models.CharField(max_length=50)),
                ('last_id', models.BigIntegerField(default=0)),
                ('rows', models.BigIntegerField(default=0, help_text='Rows written to the lake so far')),
                ('updated_at', models.DateTimeField(auto_now=True)),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('lake', 'dataset'), name='watermark_unique')],
            },
        ),
        migrations.CreateModel(
            name='FailureGroupDay',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('day', models.DateField()),
                ('count', models.BigIntegerField()),
                ('group', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='days', to='console.failuregrouphistory')),
            ],
            options={
                'ordering': ['group', 'day'],
                'constraints': [models.UniqueConstraint(fields=('group', 'day'), name='group_day_unique')],
            },
        ),
    ]
