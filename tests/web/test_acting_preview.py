"""The preview of a bulk action freezes what the operator saw; the confirm step acts on exactly that."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from console.brokers.memory.adapter import MemoryAdapter
from console.models import AuditEvent, DeadLetter, Job
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


@pytest.fixture
def letters(place):
    origins = ["orders", "orders", "orders", "payments", "payments", ""]
    return [store_letter(place, f"order {i} bad".encode(), origin=origin) for i, origin in enumerate(origins)]


def _preview(client, place, **data):
    return client.post(reverse("action-preview", args=[place.pk]), data)


def _token(response) -> str:
    return re.search(r'name="token" value="([^"]+)"', response.content.decode()).group(1)


def _confirm(client, response, **data):
    return client.post(reverse("action-confirm"), {"token": _token(response), **data})


def test_the_place_page_offers_a_preview_not_a_job(signed_in, place, letters):
    html = signed_in.get(reverse("place", args=[place.pk])).content.decode()
    assert f'formaction="{reverse("action-preview", args=[place.pk])}"' in html
    assert "Preview…" in html and 'id="move-targets"' in html


def test_select_all_freezes_the_filter_and_ignores_letters_that_arrive_after_the_preview(signed_in, place, letters):
    preview = _preview(signed_in, place, action="replay", select_all="1", **{"filter-q": "bad"})
    html = preview.content.decode()
    assert preview.status_code == 200 and not Job.objects.exists()
    assert '<strong id="preview-count">6</strong>' in html and "<code>q=bad</code>" in html
    assert "No new matching letters have arrived since this preview." in html

    late = [store_letter(place, b"order 7 bad"), store_letter(place, b"order 8 bad")]
    arrived = signed_in.get(reverse("action-arrived"), {"token": _token(preview)}, HTTP_HX_REQUEST="true")
    said = arrived.content.decode()
    assert "2 new matching letters arrived since this preview; this action leaves them alone." in said

    response = _confirm(signed_in, preview, reason="fixed the currency table", ticket="INC-7")
    job = Job.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("job", args=[job.pk])
    assert (job.kind, job.total, job.reason, job.ticket, job.place_id) == ("replay", 6, "fixed the currency table",
                                                                            "INC-7", place.pk)
    assert job.selection["max_id"] == letters[-1].pk < late[0].pk
    job_page = signed_in.get(response["Location"]).content.decode()
    assert "2 matching letters arrived since; this job leaves them alone" in job_page


def test_the_preview_counts_letters_per_origin_and_says_where_they_go(signed_in, place, letters):
    html = _preview(signed_in, place, action="replay", select_all="1").content.decode()
    rows = re.findall(r"<tr>\s*<td>mem</td>\s*<td>([^<]*)</td>\s*<td>(.*?)</td>\s*<td class=\"num\">(\d+)</td>",
                      html, re.S)
    assert [(origin, count) for origin, _, count in rows] == [("orders", "3"), ("payments", "2"), ("unknown", "1")]
    assert "<code>orders</code>" in rows[0][1] and "none: these will be refused" in rows[2][1]

    moved = _preview(signed_in, place, action="move", target="orders.parked", ids=[letters[0].pk, letters[3].pk])
    html = moved.content.decode()
    assert '<strong id="preview-count">2</strong>' in html and "ticked by hand" in html
    assert html.count("<code>orders.parked</code>") == 3  # the heading and both origins' rows


def test_the_preview_shows_a_sample_of_the_letters(signed_in, place, letters):
    html = _preview(signed_in, place, action="mark_failed", ids=[letters[1].pk]).content.decode()
    assert f'href="/letters/{letters[1].pk}/"' in html and "order 1 bad" in html
    assert f'href="/letters/{letters[2].pk}/"' not in html


@pytest.mark.role("admin")  # purging is the admin's
def test_purge_needs_the_place_name_typed_exactly_and_a_reason(signed_in, place, letters):
    preview = _preview(signed_in, place, action="purge", select_all="1")
    assert f"Type {place.name} to purge" in preview.content.decode()
    assert re.search(r'<input[^>]*name="typed_name"[^>]*autofocus', preview.content.decode())  # keyboard starts there

    wrong_case = _confirm(signed_in, preview, reason="cleanup", typed_name=place.name.upper())
    assert wrong_case.status_code == 200  # the preview again, with the error
    assert "The name does not match (it is case-sensitive): nothing was purged." in wrong_case.content.decode()
    no_reason = _confirm(signed_in, preview, reason="  ", typed_name=place.name)
    assert "A reason is required: it goes into the audit." in no_reason.content.decode()
    blank = _confirm(signed_in, preview, reason="cleanup")
    assert "Type the place&#x27;s name to confirm the purge." in blank.content.decode()
    assert not Job.objects.exists() and not AuditEvent.objects.filter(action="job.requested").exists()

    done = _confirm(signed_in, preview, reason="cleanup", typed_name=place.name)
    assert done.status_code == 302 and Job.objects.get().kind == "purge"


def test_other_actions_need_a_reason_but_no_typed_name(signed_in, place, letters):
    preview = _preview(signed_in, place, action="mark_failed", ids=[letters[0].pk])
    assert "to purge" not in preview.content.decode()
    assert "A reason is required" in _confirm(signed_in, preview, reason="").content.decode()
    assert _confirm(signed_in, preview, reason="won't fix").status_code == 302
    assert Job.objects.get().selection == {"ids": [letters[0].pk]}


def test_a_forged_or_tampered_token_is_refused(signed_in, place, letters):
    preview = _preview(signed_in, place, action="replay", ids=[letters[0].pk])
    token = _token(preview)
    response = signed_in.post(reverse("action-confirm"), {"token": token[:-2] + "xx", "reason": "r"}, follow=True)
    assert "This preview has expired or is not valid" in response.content.decode()
    assert not Job.objects.exists()


def test_a_token_is_only_good_for_the_operator_who_previewed(signed_in, place, letters, client, django_user_model):
    preview = _preview(signed_in, place, action="replay", ids=[letters[0].pk])
    other = django_user_model.objects.create_user("piotr", password="another-pass-456")
    client.force_login(other)
    client.post(reverse("action-confirm"), {"token": _token(preview), "reason": "r"})
    assert not Job.objects.exists()


def test_move_needs_a_target_and_actions_the_adapter_lacks_are_hidden(signed_in, place, letters, monkeypatch):
    response = _preview(signed_in, place, action="move", ids=[letters[0].pk])
    assert response.status_code == 302
    assert "A move needs a target queue." in signed_in.get(response["Location"]).content.decode()

    monkeypatch.setattr(MemoryAdapter, "can_move_to_destination", False)
    html = signed_in.get(reverse("place", args=[place.pk])).content.decode()
    assert '<option value="move">' not in html and '<option value="replay">' in html
    _preview(signed_in, place, action="move", target="elsewhere", ids=[letters[0].pk])
    assert not Job.objects.exists()


@pytest.mark.role("admin")  # purging is the admin's
def test_ticked_letters_of_another_place_are_left_out(signed_in, place, letters, memory_broker):
    stranger = store_letter(memory_place(memory_broker, origin="billing"), b"not yours")
    html = _preview(signed_in, place, action="purge", ids=[letters[0].pk, stranger.pk]).content.decode()
    assert '<strong id="preview-count">1</strong>' in html
    assert DeadLetter.objects.get(pk=stranger.pk).state == "held"
