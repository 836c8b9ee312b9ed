"""An index and an extension for a million letters (benchmarks/scale.py):

- ``letter_place_id`` on (place, id): a place's letters in id order. Without it the first
  letters page of a 10,000-letter place beside a 1,000,000-letter one walked the whole primary
  key (about 0.7 s); with it, a few milliseconds.
- the pg_trgm extension, for the trigram index of 0014 (console.models.letter.LetterText): a
  body-text search that matches few letters read every body (about 0.7 s at 1,000,000);
  with it, only the letters holding every trigram of the needle are read.

The index is built CONCURRENTLY, so a console with letters already in custody keeps
capturing while it builds.
"""

from django.contrib.postgres.operations import AddIndexConcurrently, TrigramExtension
from django.db import migrations, models


class Migration(migrations.Migration):

    atomic = False

    dependencies = [
        ('console', '0012_pending_acks'),
    ]

    operations = [
        TrigramExtension(),
        AddIndexConcurrently(
            model_name='deadletter',
            index=models.Index(fields=['place', 'id'], name='letter_place_id'),
        ),
    ]
