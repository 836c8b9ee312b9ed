"""Two indexes for a million letters (benchmarks/scale.py):

- ``letter_place_id`` on (place, id): a place's letters in id order. Without it the first
  letters page of a 10,000-letter place beside a 1,000,000-letter one walked the whole primary
  key (about 0.7 s); with it, a few milliseconds.
- ``letter_body_trgm``, a trigram index (pg_trgm) on the body as escaped text
  (console.models.letter.EscapedBody): a body-text search that matches few letters read every
  body (about 0.7 s at 1,000,000); with it, only the letters holding every trigram of the
  needle are read.

Both are built CONCURRENTLY, so a console with letters already in custody keeps capturing
while they build (minutes for the trigram index at a million letters).
"""

import django.contrib.postgres.indexes
from django.contrib.postgres.operations import AddIndexConcurrently, TrigramExtension
from django.db import migrations, models

import console.models.letter


class Migration(migrations.Migration):

    atomic = False

    dependencies = [
        ('console', '0010_job_concurrency_canary_shovel'),
    ]

    operations = [
        TrigramExtension(),
        AddIndexConcurrently(
            model_name='deadletter',
            index=models.Index(fields=['place', 'id'], name='letter_place_id'),
        ),
        AddIndexConcurrently(
            model_name='deadletter',
            index=django.contrib.postgres.indexes.GinIndex(
                django.contrib.postgres.indexes.OpClass(console.models.letter.EscapedBody(), name='gin_trgm_ops'),
                name='letter_body_trgm',
            ),
        ),
    ]
