"""The job page of a waiting job: the frozen preview the requester saw; approve and refuse for
others; the requester's own attempt refused with a clear message (and audited)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from console.jobs.door.requests import request_job
from console.models import AuditEvent
from console.services.selection import freeze
from tests.web.factory import store_letter

pytestmark = [pytest.mark.django_db, pytest.mark.approvals]


@pytest.fixture
def waiting(admin_user, letters):
    """A purge of every letter of the place, frozen before a fourth letter arrived."""
    place = letters[0].place
    selection = freeze(filter={"place": str(place.pk)})
    job = request_job("purge", actor=admin_user, reason="test data", selection=selection)
    store_letter(place, b"arrived later")
    return job


@pytest.mark.role("admin")  # only someone who may purge approves a purge
def test_the_second_person_sees_the_frozen_preview_and_approves(client, operator, waiting, letters, queued_jobs,
                                                                 django_capture_on_commit_callbacks):
    client.force_login(operator)
    listed = client.get(reverse("approvals")).content.decode()
    assert f'href="{reverse("job", args=[waiting.pk])}"' in listed and "review" in listed

    page = client.get(reverse("job", args=[waiting.pk])).content.decode()
    assert 'id="approval-count">3<' in page  # not 4: the frozen selection
    assert "1 matching letter arrived since; this job leaves it alone" in page
    assert all(f'href="{reverse("letter", args=[letter.pk])}"' in page for letter in letters)
    assert ">Approve</button>" in page and ">Refuse</button>" in page

    with django_capture_on_commit_callbacks(execute=True):
        done = client.post(reverse("job-approve", args=[waiting.pk]), {"reason": "checked"}, follow=True)
    assert f"Job {waiting.pk} approved" in done.content.decode() and queued_jobs == [waiting.pk]
    assert "Approved by olga" in done.content.decode()


def test_the_requester_gets_no_buttons_and_a_forged_approval_is_refused_and_audited(client, admin_user, waiting,
                                                                                     queued_jobs):
    client.force_login(admin_user)
    page = client.get(reverse("job", args=[waiting.pk])).content.decode()
    assert ">Approve</button>" not in page and "You asked for this job" in page
    assert "you asked for it" in client.get(reverse("approvals")).content.decode()

    answer = client.post(reverse("job-approve", args=[waiting.pk]), {"reason": "mine"}, follow=True)
    assert "another admin must approve it" in answer.content.decode()
    waiting.refresh_from_db()
    assert waiting.status == "awaiting_approval" and queued_jobs == []
    assert AuditEvent.objects.filter(job_id=waiting.pk, action="job.self_approval_refused", actor_name="ada").exists()


def test_refusing_from_the_page_needs_a_reason(client, operator, waiting):
    client.force_login(operator)
    blank = client.post(reverse("job-refuse", args=[waiting.pk]), {"reason": " "}, follow=True)
    assert "a reason is required to refuse a job" in blank.content.decode()
    refused = client.post(reverse("job-refuse", args=[waiting.pk]), {"reason": "wrong place"}, follow=True)
    assert "Refused by olga" in refused.content.decode()
    waiting.refresh_from_db()
    assert waiting.status == "refused"


@pytest.mark.role("admin")
def test_the_approvals_list_approves_and_refuses_in_place(client, operator, waiting, letters, queued_jobs,
                                                          django_capture_on_commit_callbacks):
    """Issue 46: the list itself has Approve and Refuse, not only a "review" link."""
    client.force_login(operator)
    listed = client.get(reverse("approvals")).content.decode()
    row = listed[listed.index(f'aria-label="Approve or refuse job {waiting.pk}"'):]
    assert f'action="{reverse("job-approve", args=[waiting.pk])}"' in listed
    assert f'formaction="{reverse("job-refuse", args=[waiting.pk])}">Refuse</button>' in row
    refused = client.post(reverse("job-refuse", args=[waiting.pk]), {"reason": "customer orders"}, follow=True)
    assert f"Job {waiting.pk} refused" in refused.content.decode()
    assert "No job waits for approval." in client.get(reverse("approvals")).content.decode()


@pytest.mark.role("admin")
def test_a_purge_preview_says_it_will_wait_for_a_second_person(signed_in, letters):
    place = letters[0].place
    preview = signed_in.post(reverse("action-preview", args=[place.pk]), {"action": "purge", "select_all": "1"})
    assert 'id="approval-note">A purge always waits for a second person to approve it before it runs.' in (
        preview.content.decode())
    marked = signed_in.post(reverse("action-preview", args=[place.pk]), {"action": "mark_failed", "select_all": "1"})
    assert 'id="approval-note"' not in marked.content.decode()  # three letters, under the threshold
