"""Issue 46: outcomes that tell the truth. A replay whose letters go partly to an origin the
broker no longer has ends "partly failed" (not "succeeded"), on its page, in /jobs/ and in its
notification; the page lists the failed letters with the broker's reasons and retries them
through the usual preview. A job a second person refuses is "refused", and a page left open on
it turns with it."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import Job
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


@pytest.fixture
def half_routable(memory_broker):
    """Two letters whose origin the broker has, two whose origin it no longer has."""
    fake, _ = memory_broker
    fake.queue("orders")
    place = memory_place(memory_broker, origin="orders")
    good = [store_letter(place, f'{{"n": {n}}}'.encode(), origin="orders") for n in range(2)]
    lost = [store_letter(place, f'{{"n": {n}}}'.encode(), origin="billing.gone") for n in range(2, 4)]
    return place, good, lost


def test_a_replay_that_half_failed_is_partly_failed_and_retries_the_failed_ones(signed_in, operator,
                                                                               half_routable):
    place, good, lost = half_routable
    job = request_job("replay", actor=operator, reason="after the fix", ids=[letter.pk for letter in good + lost])
    assert run_job(job.pk) == "partly_failed"
    job.refresh_from_db()
    assert (job.status, job.done, job.failed) == ("partly_failed", 2, 2)

    page = signed_in.get(reverse("job", args=[job.pk])).content.decode()
    assert 'data-status="partly_failed">partly failed</strong>' in page
    failed = page[page.index('id="failed-letters"'):]
    assert "billing.gone" in failed  # the broker's reason names the missing queue
    retry = re.search(r'<form method="post" action="([^"]+)" id="retry-failed">(.*?)</form>', failed, re.S)
    assert retry is not None
    assert sorted(map(int, re.findall(r'name="ids" value="(\d+)"', retry.group(2)))) == [letter.pk for letter in lost]
    assert 'name="action" value="replay"' in retry.group(2)

    listed = signed_in.get(reverse("jobs"), {"status": "partly_failed"}).content.decode()
    assert f'href="/jobs/{job.pk}/"' in listed and "partly_failed" in listed

    fields = dict(re.findall(r'name="(action|reason)" value="([^"]*)"', retry.group(2)))
    preview = signed_in.post(retry.group(1), {**fields, "ids": [letter.pk for letter in lost]})
    assert preview.status_code == 200
    assert "2 letters" in preview.content.decode()


@pytest.mark.approvals
@pytest.mark.role("admin")
def test_a_refused_job_is_refused_and_its_open_page_turns(client, operator, memory_broker, django_user_model):
    from console.access.roles import ADMIN, set_role
    from console.jobs.door.approvals import do_refuse

    place = memory_place(memory_broker, origin="orders")
    store_letter(place, b"{}")
    job = request_job("purge", actor=operator, reason="old test data", filter={"place": place.pk})
    assert job.status == Job.Status.AWAITING_APPROVAL
    client.force_login(operator)
    polled = {"shown": "cancel", "seen": "awaiting_approval"}
    still = client.get(reverse("job", args=[job.pk]), polled, headers={"HX-Request": "true"})
    assert still.status_code == 200 and "HX-Refresh" not in still

    second = django_user_model.objects.create_user("rita", password="x-pass-123456")
    set_role(second, ADMIN)
    do_refuse(job, actor=second, reason="these are customer orders")
    assert Job.objects.get(pk=job.pk).status == "refused"
    turned = client.get(reverse("job", args=[job.pk]), polled, headers={"HX-Request": "true"})
    assert turned["HX-Refresh"] == "true"
    page = client.get(reverse("job", args=[job.pk])).content.decode()
    assert 'data-status="refused">Refused</strong>' in page and "Refused by rita" in page
    assert "must approve" not in page
    assert f'href="/jobs/{job.pk}/"' in client.get(reverse("jobs"), {"status": "refused"}).content.decode()
