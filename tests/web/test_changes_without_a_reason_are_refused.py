"""A change asked for without a reason (empty, or only spaces) is refused, says so, and changes
nothing: keeping a place in custody, a broker's default for new places, capturing a place,
releasing a letter (console.refusals.require_reason behind each)."""

from __future__ import annotations

from django.urls import reverse

from console.models import AuditEvent, DeadLetter, Job
from tests.web.factory import store_letter


def test_keeping_a_place_without_a_reason_is_refused(signed_in, place):
    answer = signed_in.post(reverse("place-keep", args=[place.pk]), {"keep": "on", "reason": "  "}, follow=True)
    assert f"Keeping {place.name} in custody: a reason is required" in answer.content.decode()
    place.refresh_from_db()
    assert place.keep_in_custody is False
    assert not AuditEvent.objects.filter(action="place.keep").exists()


def test_a_brokers_default_without_a_reason_is_refused(signed_in, place):
    broker = place.broker
    answer = signed_in.post(reverse("broker-keep-new", args=[broker.pk]), {"keep": "on", "reason": ""}, follow=True)
    assert f"New places of {broker.name}: a reason is required" in answer.content.decode()
    broker.refresh_from_db()
    assert broker.keep_new_places is False


def test_a_capture_without_a_reason_is_refused(signed_in, place):
    answer = signed_in.post(reverse("place-capture", args=[place.pk]), {"reason": " \t "}, follow=True)
    assert f"Capture from {place.name}: a reason is required" in answer.content.decode()
    assert not Job.objects.exists()


def test_releasing_a_letter_without_a_reason_is_refused_before_anything_else(signed_in, place):
    letter = store_letter(place, b"{}")  # not quarantined either: the missing reason is what is said
    answer = signed_in.post(reverse("letter-release", args=[letter.pk]), {"reason": " "})
    assert answer.status_code == 400
    assert "a reason is required to release a letter" in answer.content.decode()
    assert DeadLetter.objects.get(pk=letter.pk).quarantined_at is None
    assert not AuditEvent.objects.filter(action="release").exists()
