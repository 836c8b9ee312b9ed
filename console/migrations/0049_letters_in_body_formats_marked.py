"""The search rows of the letters whose bodies are in a format of console.decoders, marked as
read in Python (LetterSearch.compressed), as console.services.search_rows.read_in_python proposes
them: by a content type naming a format, or by first bytes saying one (a pickle's PROTO opcode,
Avro's single-object and container magic, an XML declaration). The fill marks new letters so; the
letters stored before these formats were read are marked here, so that the body filter reads
them as people read them (it decides on the decoded body of every marked letter)."""

from django.db import migrations

#: The content types and first bytes of console.decoders as this migration was written.
CONTENT_TYPES = [
    "application/avro", "application/cbor", "application/msgpack", "application/protobuf",
    "application/python-pickle", "application/soap+xml", "application/vnd.apache.avro+binary",
    "application/vnd.confluent.avro", "application/vnd.google.protobuf", "application/vnd.msgpack",
    "application/x-avro-binary", "application/x-msgpack", "application/x-protobuf",
    "application/x-python-serialize", "application/xml", "avro/binary", "text/xml",
]
FIRST_BYTES = [b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05", b"\xc3\x01", b"Obj\x01", b"<?xml"]

MARK = """
UPDATE console_lettersearch AS search SET compressed = true
  FROM console_deadletter AS letter
 WHERE letter.id = search.letter_id AND NOT search.pending AND NOT search.compressed
   AND (lower(coalesce(letter.properties ->> 'content_type', letter.headers ->> 'content-type',
                       letter.headers ->> 'Content-Type', letter.headers ->> 'content_type', ''))
          LIKE ANY (%s)
        OR substring(letter.body from 1 for 2) = ANY (%s)
        OR substring(letter.body from 1 for 4) = ANY (%s)
        OR substring(letter.body from 1 for 5) = ANY (%s))
"""


def mark(apps, schema_editor):
    by_length = {length: [prefix for prefix in FIRST_BYTES if len(prefix) == length] for length in (2, 4, 5)}
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(MARK, [[f"{content_type}%" for content_type in CONTENT_TYPES],
                              by_length[2], by_length[4], by_length[5]])


class Migration(migrations.Migration):
    dependencies = [("console", "0048_avro_schemas")]
    operations = [migrations.RunPython(mark, migrations.RunPython.noop)]
