"""Issue 47: the page's edit-and-replay box for a body in a format the console writes back (a
Celery task in MessagePack, gzip-compressed) shows its value as JSON; left as it is, the letter's
own bytes are sent; edited, the value is sent as MessagePack, compressed again; JSON that does not
parse is refused in the form, and the audit keeps the diff of the decoded values."""

from __future__ import annotations

import gzip
import json

import msgpack
import pytest
from django.urls import reverse

from console.models import AuditEvent, DeadLetter
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db

TASK = [[42, "EUR"], {"retry": True}, {"callbacks": None}]
BODY = gzip.compress(msgpack.packb(TASK), mtime=0)
PROPERTIES = {"content_type": "application/x-msgpack", "content_encoding": "gzip"}
SHOWN = json.dumps(TASK, indent=2)


@pytest.fixture
def letter(memory_broker):
    return store_letter(memory_place(memory_broker), BODY, properties=PROPERTIES)


def _send(client, letter, body: str):
    return client.post(reverse("letter-edit", args=[letter.pk]), {
        "body": body.replace("\n", "\r\n"), "body_encoding": "decoded", "headers": "{}", "reason": "fix the amount",
        "confirmed": "1"})


def test_the_box_shows_the_value_as_json(signed_in, letter):
    page = signed_in.get(reverse("letter", args=[letter.pk])).content.decode()
    assert "MessagePack, edited as JSON" in page and 'id="edit-format"' in page
    assert "&quot;EUR&quot;" in page


def test_an_unedited_box_sends_the_letters_own_bytes(signed_in, letter):
    _send(signed_in, letter, SHOWN)
    assert DeadLetter.objects.get(parent=letter).body_bytes == BODY


def test_an_edit_is_sent_as_messagepack_compressed_again(signed_in, letter):
    _send(signed_in, letter, SHOWN.replace("42", "43"))
    copy = DeadLetter.objects.get(parent=letter)
    assert msgpack.unpackb(gzip.decompress(copy.body_bytes)) == [[43, "EUR"], {"retry": True}, {"callbacks": None}]
    (event,) = AuditEvent.objects.filter(action="edit_replay")
    assert "-    42,\n+    43," in event.details["body"]["diff"]


def test_json_that_does_not_parse_is_refused_in_the_form(signed_in, letter):
    page = _send(signed_in, letter, SHOWN.replace("]", "", 1)).content.decode()
    assert "The body is not valid JSON" in page
    assert not DeadLetter.objects.filter(parent=letter).exists()
