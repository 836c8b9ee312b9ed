"""What the pages show of one broker is what its adapter declares (console.brokers.<kind>): a
table of what the broker wrote on a letter (RabbitMQ's x-death), the broker form's example URL
and what its management URL is. A broker added as a folder brings its own."""

from __future__ import annotations

import html as html_text
import json
import re
from typing import Any

import pytest
from django.urls import reverse

from console.brokers import registry
from console.brokers.memory.adapter import MemoryAdapter
from console.letters.tables import Column, LetterTable
from console.web.broker_forms import EditBrokerForm
from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db


class HopsAdapter(MemoryAdapter):
    """A broker that writes its hops in a header of its own, declared as a table."""

    kind = "hops"
    label = "Hops broker"
    url_example = "hops://host:1"
    in_process = False  # offered as any broker is, DEBUG or not

    @classmethod
    def letter_tables(cls, envelope_details: dict[str, Any], headers: dict[str, Any]) -> list[LetterTable]:
        hops = headers.get("x-hops") or []
        if not hops:
            return []
        return [LetterTable(anchor="hops", title="Hops", columns=(Column("Station"), Column("Seconds", numeric=True)),
                            rows=tuple((hop["at"], str(hop["took"])) for hop in hops))]


@pytest.fixture
def hops_kind():
    registry.KINDS.register("hops", f"{__name__}.HopsAdapter")
    yield
    registry.KINDS.unregister("hops")


def test_a_table_a_new_adapter_declares_is_on_the_letter_page(signed_in, place, hops_kind):
    letter = store_letter(place, headers={"x-hops": [{"at": "north", "took": 3}, {"at": "south", "took": 12}]})
    page = signed_in.get(reverse("letter", args=[letter.pk])).content.decode()
    table = page.split('id="hops"')[1].split("</table>")[0]
    assert '<th scope="col">Station</th><th scope="col" class="num">Seconds</th>' in table
    assert '<td>north</td><td class="num">3</td>' in table and '<td>south</td><td class="num">12</td>' in table
    assert 'id="x-death"' not in page  # no x-death header, no x-death table


def test_a_letter_without_what_an_adapter_reads_shows_no_table(signed_in, place):
    letter = store_letter(place, headers={"x-other": "1"})
    page = signed_in.get(reverse("letter", args=[letter.pk])).content.decode()
    assert "<table class=" not in page.split('id="envelope"')[1].split('id="headers"')[0]


@pytest.mark.parametrize("kind, example, management", [
    ("rabbitmq", "amqp://host:5672/%2F", "RabbitMQ&#x27;s management API, e.g. http://host:15672"),
    ("nats", "nats://host:4222", ""),
    ("redis", "redis://host:6379/0", ""),
    ("activemq", "stomp://host:61613", ""),
])
def test_the_edit_form_shows_its_kinds_example_and_management_help(kind, example, management):
    form = EditBrokerForm(kind=kind)
    url = re.search(r'<input[^>]*name="url"[^>]*>', str(form["url"])).group(0)
    assert f'placeholder="{example}"' in url
    assert html_text.escape(form.fields["management_url"].help_text) == management


@pytest.mark.role("admin")
def test_the_new_broker_form_carries_every_kinds_help_for_the_chosen_kind(signed_in, hops_kind):
    page = signed_in.get(reverse("broker-new")).content.decode()
    data = re.search(r'<script id="broker-kind-help" type="application/json">(.*?)</script>', page, re.S).group(1)
    help_ = json.loads(data)
    assert help_["rabbitmq"] == {"url": "amqp://host:5672/%2F",
                                 "management_url": "RabbitMQ's management API, e.g. http://host:15672"}
    assert help_["hops"] == {"url": "hops://host:1", "management_url": ""}
    assert '<option value="hops">Hops broker</option>' in page
