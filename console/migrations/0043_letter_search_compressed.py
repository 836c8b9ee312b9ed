"""LetterSearch.compressed: the letters whose properties or headers may say their body is
compressed (console.services.search_rows.COMPRESSED), marked on their search rows with an index
of their own, so that the body filter finds these few letters from it instead of testing every
candidate letter (issue 32: a common needle at a million letters read a quarter of a million
letters once more, two seconds). The search rows written before are marked here; a placeholder
is marked when the fill writes it. The column has a database default: the search-row triggers
insert rows without naming it."""

from django.db import migrations, models

#: console.services.search_rows.COMPRESSED as this migration was written, in SQL.
VARIANTS = [variant for name in ("content-encoding", "content_encoding", "compression")
            for variant in (name, name.title(), name.upper())]
MARK = """
UPDATE console_lettersearch AS search SET compressed = true
  FROM console_deadletter AS letter
 WHERE letter.id = search.letter_id AND NOT search.pending
   AND ((letter.properties ->> 'content_encoding') ~* '^\\s*(x-)?(gzip|deflate|zlib|zstd|zstandard)\\s*(:|$)'
        OR letter.headers ?| %s)
"""


def mark(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(MARK, [VARIANTS])
        cursor.execute("ANALYZE console_lettersearch")  # the planner must know how few they are


class Migration(migrations.Migration):
    dependencies = [("console", "0042_placeholder_issue34")]
    operations = [
        migrations.AddField(
            model_name="lettersearch",
            name="compressed",
            field=models.BooleanField(db_default=False, default=False),
        ),
        migrations.AddIndex(
            model_name="lettersearch",
            index=models.Index(condition=models.Q(("compressed", True)), fields=["letter"],
                               name="letter_search_compressed"),
        ),
        migrations.RunPython(mark, migrations.RunPython.noop),
    ]
