"""Edit and replay one letter: a copy with the edited content is replayed; the diff is audited."""

from __future__ import annotations

import base64
import json
import re
from html import unescape as html_unescape

import pytest
from django.urls import reverse

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import AuditEvent, DeadLetter, Job
from console.services.audit import verify_chain
from console.services.jobs import JobError
from tests.web.factory import XSS_IMG, XSS_SCRIPT, store_letter

pytestmark = pytest.mark.django_db


@pytest.fixture
def letter(place):
    return store_letter(place, b'{"order": 7, "currency": "EUR"}\n',
                        headers={"x-tenant": "acme", "x-attempt": 3, "x-blob": b"\x00\x01"})


def _edit(client, letter, **data):
    fields = {"body": '{"order": 7, "currency": "USD"}\n', "body_encoding": "text",
              "headers": json.dumps({**letter.headers, "x-fixed-by": "olga"}), "reason": "currency was wrong",
              "confirmed": "1"}  # as the preview's form sends it (test_an_edit_is_previewed_first)
    return client.post(reverse("letter-edit", args=[letter.pk]), {**fields, **data})


def test_the_letter_page_offers_the_body_and_tagged_headers_to_edit(signed_in, letter):
    html = signed_in.get(reverse("letter", args=[letter.pk])).content.decode()
    assert f'action="/letters/{letter.pk}/edit/"' in html
    assert "&quot;currency&quot;: &quot;EUR&quot;" in html  # the body in the text area, escaped
    assert "&quot;$bytes&quot;: &quot;AAE=&quot;" in html  # bytes stay tagged in the headers editor
    assert '<option value="text" selected>' in html


def test_an_edit_is_previewed_first(signed_in, letter, memory_broker):
    """Issue 46: like every action, edit-and-replay shows what it will do before it does it."""
    preview = _edit(signed_in, letter, confirmed="")
    html = preview.content.decode()
    assert preview.status_code == 200 and not Job.objects.exists() and DeadLetter.objects.count() == 1
    assert "Preview: replay an edited copy" in html
    assert "header added <code>x-fixed-by</code>" in html and "+{&quot;order&quot;: 7, &quot;currency&quot;: " \
        "&quot;USD&quot;}" in html
    assert 'published to\n  <code>orders</code> on <strong>mem</strong>' in html
    posted = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', html))
    assert posted["confirmed"] == "1" and posted["reason"] == "currency was wrong"
    done = signed_in.post(reverse("letter-edit", args=[letter.pk]), {
        **{name: html_unescape(value) for name, value in posted.items()}})
    job = Job.objects.get()
    assert done["Location"] == reverse("job", args=[job.pk])
    assert DeadLetter.objects.get(parent=letter).body_bytes == b'{"order": 7, "currency": "USD"}\n'


def test_edit_and_replay_replays_the_edited_copy_and_audits_the_diff(signed_in, letter, memory_broker):
    fake, _ = memory_broker
    response = _edit(signed_in, letter, ticket="INC-12")
    job = Job.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("job", args=[job.pk])

    copy = DeadLetter.objects.exclude(pk=letter.pk).get()
    letter.refresh_from_db()
    assert copy.parent_id == letter.pk and copy.envelope_details["edited_from"] == letter.pk
    assert copy.body_bytes == b'{"order": 7, "currency": "USD"}\n' and copy.headers["x-fixed-by"] == "olga"
    assert letter.state == "failed" and letter.body_bytes == b'{"order": 7, "currency": "EUR"}\n'
    assert job.selection == {"ids": [copy.pk]} and job.kind == "edit_replay"

    event = AuditEvent.objects.get(action="edit_replay")
    assert (event.actor_name, event.reason, event.ticket, event.job_id) == ("olga", "currency was wrong", "INC-12",
                                                                            job.pk)
    assert event.letter_ids == [letter.pk, copy.pk]
    diff = event.details
    assert diff["headers"] == {"added": {"x-fixed-by": "olga"}, "removed": {}, "changed": {}}
    assert diff["body"]["changed"] and diff["body"]["before"]["bytes"] == 32
    assert '-{"order": 7, "currency": "EUR"}' in diff["body"]["diff"]
    assert '+{"order": 7, "currency": "USD"}' in diff["body"]["diff"]
    assert verify_chain().ok

    assert run_job(job.pk) == "succeeded"
    (delivered,) = fake.queue("orders")
    assert delivered.body == b'{"order": 7, "currency": "USD"}\n'
    assert delivered.headers["x-blob"] == b"\x00\x01" and delivered.headers["x-fixed-by"] == "olga"
    assert delivered.headers["x-dlo-replay-id"] == DeadLetter.objects.get(pk=copy.pk).replay_id
    assert DeadLetter.objects.get(pk=copy.pk).state == "replayed"

    page = signed_in.get(reverse("letter", args=[letter.pk])).content.decode()
    assert "Edited copies" in page and f'href="/letters/{copy.pk}/"' in page and "What was edited" in page
    assert "an edit of" in signed_in.get(reverse("letter", args=[copy.pk])).content.decode()


def test_changed_and_removed_headers_and_a_binary_body_in_base64(signed_in, place):
    letter = store_letter(place, b"\xff\xfe\x00binary", headers={"x-a": "1", "x-b": "2"})
    html = signed_in.get(reverse("letter", args=[letter.pk])).content.decode()
    assert '<option value="base64" selected>' in html and base64.b64encode(b"\xff\xfe\x00binary").decode() in html
    _edit(signed_in, letter, body=base64.b64encode(b"\xff\xfe\x01binary").decode(), body_encoding="base64",
          headers=json.dumps({"x-a": "one"}))
    diff = AuditEvent.objects.get(action="edit_replay").details
    assert diff["headers"]["changed"] == {"x-a": {"before": "1", "after": "one"}}
    assert diff["headers"]["removed"] == {"x-b": "2"} and diff["body"]["diff"] == ""  # no text diff of binary
    assert DeadLetter.objects.exclude(pk=letter.pk).get().body_bytes == b"\xff\xfe\x01binary"


@pytest.mark.parametrize(
    "data, message",
    [
        ({"headers": "{not json"}, "The headers are not valid JSON"),
        ({"headers": "[1, 2]"}, "Headers: headers must be a JSON object"),
        ({"headers": '{"x": {"$ts": "yesterday"}}'}, "Headers: a tagged header value does not decode"),
        ({"body": "@@not base64@@", "body_encoding": "base64"}, "The body is not valid base64."),
        ({"reason": ""}, "A reason is required: it goes into the audit."),
    ],
)
def test_invalid_edits_are_refused_with_a_message_and_change_nothing(signed_in, letter, data, message):
    response = _edit(signed_in, letter, **data)
    assert response.status_code == 200 and message in response.content.decode()
    assert DeadLetter.objects.count() == 1 and not Job.objects.exists()
    assert not AuditEvent.objects.filter(action="edit_replay").exists()


def test_a_letter_with_no_known_origin_cannot_be_edited_and_replayed(place, operator):
    letter = store_letter(place, b"x", origin="")
    with pytest.raises(JobError, match="has no known origin"):
        request_job("edit_replay", letter=letter, body=b"y", headers={}, actor=operator, reason="r")
    assert DeadLetter.objects.get(pk=letter.pk).state == "held" and DeadLetter.objects.count() == 1


def test_a_letter_already_replayed_cannot_be_edited(letter, operator):
    DeadLetter.objects.filter(pk=letter.pk).update(state="replayed")
    with pytest.raises(JobError, match="only held or failed letters can be edited"):
        request_job("edit_replay", letter=letter, body=b"x", headers={}, actor=operator, reason="r")
    assert DeadLetter.objects.count() == 1


def test_hostile_content_in_the_edit_form_and_the_diff_is_escaped(signed_in, place):
    letter = store_letter(place, XSS_SCRIPT.encode(), headers={"x-evil": XSS_IMG})
    page = signed_in.get(reverse("letter", args=[letter.pk])).content.decode()
    assert XSS_SCRIPT not in page and XSS_IMG not in page
    _edit(signed_in, letter, body=XSS_SCRIPT + "!", headers=json.dumps({"x-evil": XSS_IMG + "!"}))
    audit = signed_in.get(reverse("audit")).content.decode()
    assert XSS_SCRIPT not in audit and XSS_IMG not in audit
    assert "&lt;img src=x onerror=alert(1)&gt;!" in audit
