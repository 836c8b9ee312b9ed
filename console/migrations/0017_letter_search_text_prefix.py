"""LetterSearch keeps the trigrams of a body's first 64 KiB only, and says when the body is
longer (``partial``): the body filter then looks at those letters' bodies directly. The
triggers of 0014 are replaced; texts already written for longer bodies are cut."""

from django.db import migrations, models

TEXT_BYTES = 64 * 1024

SYNC = f"""
CREATE OR REPLACE FUNCTION console_letter_search_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO console_lettersearch (letter_id, headers, text, partial)
    SELECT id, headers, encode(substring(body FROM 1 FOR {TEXT_BYTES}), 'escape'), octet_length(body) > {TEXT_BYTES}
      FROM new_letters;
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION console_letter_search_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE console_lettersearch
       SET headers = NEW.headers, text = encode(substring(NEW.body FROM 1 FOR {TEXT_BYTES}), 'escape'),
           partial = octet_length(NEW.body) > {TEXT_BYTES}
     WHERE letter_id = NEW.id;
    RETURN NULL;
END $$;
UPDATE console_lettersearch AS s
   SET text = encode(substring(d.body FROM 1 FOR {TEXT_BYTES}), 'escape'), partial = true
  FROM console_deadletter AS d
 WHERE d.id = s.letter_id AND octet_length(d.body) > {TEXT_BYTES};
"""

UNSYNC = """
CREATE OR REPLACE FUNCTION console_letter_search_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO console_lettersearch (letter_id, headers, text)
    SELECT id, headers, encode(body, 'escape') FROM new_letters;
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION console_letter_search_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE console_lettersearch SET headers = NEW.headers, text = encode(NEW.body, 'escape')
     WHERE letter_id = NEW.id;
    RETURN NULL;
END $$;
UPDATE console_lettersearch AS s SET text = encode(d.body, 'escape')
  FROM console_deadletter AS d
 WHERE d.id = s.letter_id AND s.partial;
"""


class Migration(migrations.Migration):

    dependencies = [
        ('console', '0016_custody_writes_without_fk_checks'),
    ]

    operations = [
        migrations.AddField(
            model_name='lettersearch',
            name='partial',
            field=models.BooleanField(default=False),
        ),
        migrations.RunSQL(SYNC, reverse_sql=UNSYNC),
        migrations.AddIndex(
            model_name='lettersearch',
            index=models.Index(condition=models.Q(('partial', True)), fields=['letter'], name='letter_search_partial'),
        ),
    ]
