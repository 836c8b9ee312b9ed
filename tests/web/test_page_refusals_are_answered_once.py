"""A refusal a page view lets through (console.refusals) is answered once, by
console.web.refusals.RefusalMiddleware: back to the page the form was posted from with the
reason, a fragment for htmx, a page with the refusal's status otherwise; never a 500."""

from __future__ import annotations

from django.urls import reverse

from tests.web.factory import store_letter


def test_a_refused_release_goes_back_to_the_letter_with_the_reason(signed_in, place):
    letter = store_letter(place, b"{}")  # not quarantined: there is nothing to release
    page = reverse("letter", args=[letter.pk])
    answer = signed_in.post(reverse("letter-release", args=[letter.pk]), {"reason": "consumer fixed"},
                            HTTP_REFERER=f"http://testserver{page}", follow=True)
    assert answer.redirect_chain == [(f"http://testserver{page}", 302)]
    assert f"Letter {letter.pk} is not quarantined." in answer.content.decode()


def test_a_refusal_without_a_page_to_go_back_to_is_a_page_with_its_status(signed_in, place):
    letter = store_letter(place, b"{}")
    answer = signed_in.post(reverse("letter-release", args=[letter.pk]), {"reason": "consumer fixed"})
    assert answer.status_code == 400
    assert f"Letter {letter.pk} is not quarantined." in answer.content.decode()


def test_htmx_gets_the_reason_as_a_fragment(signed_in, place):
    letter = store_letter(place, b"{}")
    answer = signed_in.post(reverse("letter-release", args=[letter.pk]), {"reason": "consumer fixed"},
                            HTTP_HX_REQUEST="true")
    assert answer.status_code == 400
    assert answer.content.decode() == f'<p class="error" role="alert">Letter {letter.pk} is not quarantined.</p>'


def test_a_referer_on_another_site_is_not_followed(signed_in, place):
    letter = store_letter(place, b"{}")
    answer = signed_in.post(reverse("letter-release", args=[letter.pk]), {"reason": "consumer fixed"},
                            HTTP_REFERER="https://elsewhere.example/phish")
    assert answer.status_code == 400
