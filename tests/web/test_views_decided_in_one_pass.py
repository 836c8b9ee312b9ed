"""Issue 51: every saved view decided over a batch of new letters in one query
(console.services.view_conditions) takes exactly the letters the Letters page finds with the
view's filter, for every kind of filter: a place, a broker, a state, an origin, a reason, an
exception, a group, a header and its value (a part, or "exactly"), the body, a trace, a
consumer, an age, and several at once."""

from __future__ import annotations

import pytest

from console.models import DeadLetter
from console.services.saved_views import do_save_view, letters_filter
from console.services.selection import filter_letters
from console.services.view_conditions import matching_views
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


def test_one_pass_takes_what_each_views_own_query_takes(memory_broker, operator):
    orders, billing = memory_place(memory_broker), memory_place(memory_broker, origin="billing")
    kept = []
    for n in range(24):
        place = orders if n % 3 else billing
        headers = {"tenant": ["acme", "globex", "Acme Corp"][n % 3]} if n % 2 else {}
        if n % 5 == 0:
            headers["traceparent"] = f"00-{TRACE}-00f067aa0ba902b7-01"
        kept.append(store_letter(place, f'{{"order": {n}, "sku": "{"A" if n % 4 else "B"}-{n}"}}'.encode(),
                                 headers=headers, origin=place.name.removesuffix(".dlq"),
                                 reason=["rejected", "expired"][n % 2],
                                 exception_type=["TimeoutError", "KeyError", ""][n % 3],
                                 details={"consumer": f"c-{n % 4}"}))
    DeadLetter.objects.filter(pk__in=[letter.pk for letter in kept[:5]]).update(state="failed")
    filters = [
        {}, {"place": str(orders.pk)}, {"broker": str(orders.broker_id)}, {"state": "held"},
        {"state": "held,failed"}, {"origin": "billing"}, {"origin": '"orders"'}, {"reason": "expired"},
        {"exception": "timeout"}, {"exception": '"KeyError"'}, {"fingerprint": kept[1].fingerprint},
        {"header": "tenant"}, {"header": "tenant", "header_value": "acme"},
        {"header": "tenant", "header_value": '"acme"'}, {"q": "B-"}, {"trace_id": TRACE}, {"consumer": "c-1"},
        {"since": "2000-01-01T00:00"}, {"until": "2000-01-01T00:00"}, {"older_than": "1"},
        {"place": str(orders.pk), "exception": "timeout", "header": "tenant", "state": "held"},
        {"exception": "NoSuchException"},
    ]
    views = [do_save_view(actor=operator, name=f"view {n}", filter=given) for n, given in enumerate(filters)]
    ids = [letter.pk for letter in kept]
    batch = DeadLetter.objects.filter(pk__in=ids)

    found = matching_views(views, ids)
    expected = {view.pk: set(filter_letters(letters_filter(view), batch).values_list("id", flat=True))
                for view in views}
    assert found == expected
    # The test means something: the views take different letters, some none, one all.
    sizes = sorted(len(taken) for taken in expected.values())
    assert sizes[0] == 0 and sizes[-1] == len(ids) and len(set(sizes)) > 8
    assert matching_views(views, []) == {view.pk: set() for view in views}
