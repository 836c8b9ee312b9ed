"""Roles and redaction: the RoleScope and RedactionRule tables, and the viewer, operator and
admin groups with their permissions (kept in sync after every migrate too: console.access)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models



def create_roles(apps, schema_editor):
    from console.access.roles import sync_roles

    sync_roles(apps)


class Migration(migrations.Migration):

    dependencies = [
        ('console', '0007_signin_failure'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='RedactionRule',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(choices=[('json_path', 'JSON path (e.g. $.card.number, $..email, $.items[*].iban)'), ('header', 'Header name (case-insensitive; * matches any characters)'), ('regex', 'Regular expression (e.g. card numbers)')], max_length=20)),
                ('pattern', models.CharField(max_length=500)),
                ('note', models.CharField(blank=True, help_text='Why this is masked', max_length=200)),
                ('enabled', models.BooleanField(default=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
            ],
            options={
                'ordering': ['kind', 'pattern'],
                'constraints': [models.UniqueConstraint(fields=('kind', 'pattern'), name='redaction_rule_unique')],
            },
        ),
        migrations.CreateModel(
            name='RoleScope',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('broker', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='console.broker')),
                ('place', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='console.deadplace')),
                ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='scopes', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'permissions': [('view_console', 'See brokers, places, letters, jobs and the audit'), ('act_on_letters', 'Capture, replay, move, mark failed, edit and replay, steer jobs, discover'), ('see_unredacted', 'See bodies and headers without the redaction rules'), ('purge_letters', 'Purge letters'), ('manage_brokers', 'Add, edit and test brokers'), ('manage_users', 'Grant roles and scopes'), ('manage_redaction', 'Change the redaction rules')],
                'constraints': [models.CheckConstraint(condition=models.Q(('broker__isnull', False), ('place__isnull', False), _connector='OR'), name='rolescope_names_broker_or_place')],
            },
        ),
        migrations.RunPython(create_roles, migrations.RunPython.noop),
    ]
