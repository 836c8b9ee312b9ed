"""A letter's page offers Replay, Move, Mark failed and Purge for that letter, through the same
preview and confirm as the place page's bulk actions; a viewer is offered none."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from console.access.roles import VIEWER, set_role
from console.jobs.door.runner import run_job
from console.models import DeadLetter, Job
from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db


def _token(response) -> str:
    return re.search(r'name="token" value="([^"]+)"', response.content.decode()).group(1)


def _letter_page(client, letter) -> str:
    return client.get(reverse("letter", args=[letter.pk])).content.decode()


def _action_values(html: str) -> list[str]:
    form = html[html.index('id="letter-actions"'):]
    menu = form[form.index('<select name="action"'):form.index("</select>")]
    return re.findall(r'<option value="([a-z_]+)"', menu)


def test_an_operator_is_offered_replay_move_and_mark_failed_for_the_letter(signed_in, place):
    letter = store_letter(place, b'{"order": 1}')
    html = _letter_page(signed_in, letter)
    assert 'id="letter-actions"' in html and f'action="{reverse("action-preview", args=[place.pk])}"' in html
    assert f'<input type="hidden" name="ids" value="{letter.pk}">' in html
    assert f'<input type="hidden" name="letter" value="{letter.pk}">' in html  # the preview leads back here
    assert _action_values(html) == ["replay", "move", "mark_failed"]  # purge is an admin's


def test_an_operator_replays_the_letter_through_the_preview_and_the_job_succeeds(signed_in, place, memory_broker):
    letter = store_letter(place, b'{"order": 2}')
    store_letter(place, b'{"order": 3}')  # another letter of the place, left alone
    preview = signed_in.post(reverse("action-preview", args=[place.pk]),
                             {"action": "replay", "ids": [letter.pk], "letter": letter.pk, "reason": "consumer fixed"})
    html = preview.content.decode()
    assert preview.status_code == 200 and not Job.objects.exists()
    assert '<strong id="preview-count">1</strong>' in html
    assert f'<a href="{reverse("letter", args=[letter.pk])}">Back to the letters</a>' in html
    refused = signed_in.post(reverse("action-preview", args=[place.pk]),
                             {"action": "move", "ids": [letter.pk], "letter": letter.pk})
    assert refused["Location"] == reverse("letter", args=[letter.pk])  # a move needs a target: said on its page

    done = signed_in.post(reverse("action-confirm"), {"token": _token(preview), "reason": "consumer fixed"})
    job = Job.objects.get()
    assert done["Location"] == reverse("job", args=[job.pk])
    assert (job.kind, job.total, job.selection["ids"]) == ("replay", 1, [letter.pk])
    assert run_job(job.pk) == "succeeded"
    assert DeadLetter.objects.get(pk=letter.pk).state == "replayed"
    assert [message.body for message in memory_broker[0].queue("orders")] == [b'{"order": 2}']


@pytest.mark.role("admin")
def test_an_admin_purges_the_letter_after_typing_the_place_name(signed_in, place):
    letter = store_letter(place, b'{"card": "4111"}')
    html = _letter_page(signed_in, letter)
    assert "purge" in _action_values(html)
    preview = signed_in.post(reverse("action-preview", args=[place.pk]), {"action": "purge", "ids": [letter.pk]})
    assert f"Type {place.name} to purge" in preview.content.decode()
    signed_in.post(reverse("action-confirm"), {"token": _token(preview), "reason": "holds a card number",
                                               "typed_name": place.name})
    assert run_job(Job.objects.get(kind="purge").pk) == "succeeded"
    purged = DeadLetter.objects.get(pk=letter.pk)
    assert (purged.state, purged.body_erased) == ("purged", True)


def test_a_viewer_is_offered_no_action_on_a_letter(client, operator, place):
    set_role(operator, VIEWER)
    client.force_login(operator)
    html = _letter_page(client, store_letter(place, b'{"order": 4}'))
    assert 'id="letter-actions"' not in html and "Preview…" not in html
    assert reverse("action-preview", args=[place.pk]) not in html


def test_a_letter_already_replayed_is_offered_nothing(signed_in, place):
    letter = store_letter(place, b'{"order": 5}')
    DeadLetter.objects.filter(pk=letter.pk).update(state="replayed")
    assert 'id="letter-actions"' not in _letter_page(signed_in, letter)
