"""Issue 51, marks for people: an operator marks a letter "investigating" with an owner and a
ticket link (``POST /api/letters/<id>/mark/``), reads it on the letter (API and page), changes
and takes it away, each audited; a viewer may not mark, a user limited to another place finds
no such letter, and a ticket that is not an http(s) link (``javascript:``) is a 400. A group's
ticket is refused the same way."""

from __future__ import annotations

import pytest

from console.models import AuditEvent, LetterMark, RoleScope
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


def test_a_letter_marked_investigating_says_who_owns_it_and_where_they_work(memory_broker, people, signed_in_as,
                                                                          django_user_model):
    place = memory_place(memory_broker)
    letter = store_letter(place, b'{"n": 1}', exception_type="TimeoutError")
    operator = signed_in_as(people["operator"])
    marked = operator.post(f"/api/letters/{letter.pk}/mark/", {"owner": "ada", "ticket": "https://tracker.example.com/OPS-7",
                                                               "reason": "the vendor"}, content_type="application/json")
    assert marked.status_code == 200, marked.content
    mark = marked.json()["mark"]
    assert (mark["owner"], mark["ticket"], mark["marked_by"]) == ("ada", "https://tracker.example.com/OPS-7", "otto")
    assert operator.get(f"/api/letters/{letter.pk}/").json()["mark"]["owner"] == "ada"
    page = operator.get(f"/letters/{letter.pk}/").content.decode()
    assert "Investigating, owned by ada" in page and 'href="https://tracker.example.com/OPS-7"' in page

    for ticket in ("javascript:alert(1)", "tracker/OPS-7", "https://x/\u0000"):
        refused = operator.post(f"/api/letters/{letter.pk}/mark/", {"ticket": ticket}, content_type="application/json")
        assert refused.status_code == 400, ticket
    assert operator.post(f"/api/letters/{letter.pk}/mark/", {"owner": "nobody"},
                         content_type="application/json").status_code == 400
    assert operator.post(f"/api/letters/{letter.pk}/mark/", {}, content_type="application/json").json()["mark"][
        "owner"] == "otto", "the marker owns it unless another is named"

    viewer = signed_in_as(people["viewer"])
    assert viewer.post(f"/api/letters/{letter.pk}/mark/", {}, content_type="application/json").status_code == 403
    elsewhere = memory_place(memory_broker, origin="billing")
    limited = django_user_model.objects.create_user("lima", password="lima-pass-123")
    from console.access.roles import set_role
    set_role(limited, "operator")
    RoleScope.objects.create(user=limited, place=elsewhere)
    assert signed_in_as(limited).post(f"/api/letters/{letter.pk}/mark/", {},
                                      content_type="application/json").status_code == 404

    operator = signed_in_as(people["operator"])
    assert operator.delete(f"/api/letters/{letter.pk}/mark/?reason=done").status_code == 204
    assert not LetterMark.objects.exists()
    assert operator.delete(f"/api/letters/{letter.pk}/mark/").status_code == 400
    rows = list(AuditEvent.objects.filter(action__startswith="letter.").order_by("id").values_list(
        "action", "letter_ids"))
    assert rows == [("letter.marked", [letter.pk]), ("letter.marked", [letter.pk]), ("letter.unmarked", [letter.pk])]

    refused = operator.patch(f"/api/groups/{letter.fingerprint}/", {"ticket": "javascript:alert(1)"},
                             content_type="application/json")
    assert refused.status_code == 400
