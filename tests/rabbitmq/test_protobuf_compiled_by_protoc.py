"""Issue 47 against the real RabbitMQ, as a team that speaks gRPC would: a ``.proto`` compiled by
grpcio-tools' protoc (the Python classes and the descriptor set, ``--include_imports``), orders
serialized by the generated classes and published with a message-type header. After an admin
uploads the descriptor set, the letter's page shows the fields, ``q`` finds a field's value, and a
JSON path hides a field from a viewer on the page, in the API and in the audit's export. A rule's
``body_path`` on a field moves a letter the round decides straight after its capture. A mapping's
group path splits the failure groups by a field, each shown with its value (masked for a viewer,
and in the notification of a new group). An edit of
the decoded value reaches the origin queue as Protobuf that the generated class parses, with the
changed field; an edit that does not fit the message type answers 400 naming the field."""

from __future__ import annotations

import base64
import importlib.util
import json
import sys
from types import ModuleType

import pytest
from django.test import Client
from django.urls import reverse
from grpc_tools import protoc
from rest_framework.test import APIClient

from console.access.roles import VIEWER, set_role
from console.jobs.automation.rules_at_work import apply_rules
from console.jobs.door.runner import run_job
from console.models import DeadLetter, Delivery, Job
from console.notifications.delivery import deliver
from console.services.channels import do_add_channel, do_subscribe
from console.services.redaction import do_set_redaction_rule
from console.services.search_rows import fill_search_rows

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db]

PROTO = """syntax = "proto3";
package shop;
message Customer { string email = 1; string tier = 2; }
message Order { string id = 1; int64 cents = 2; Customer customer = 3; repeated string items = 4; }
"""
TYPE_HEADER = {"proto-message-type": "shop.Order"}
PROTOBUF = {"content_type": "application/x-protobuf"}

_compiled: dict[str, object] = {}


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> tuple[ModuleType, bytes]:
    """The classes protoc generates for the .proto, and its descriptor set (compiled once: the
    generated module registers its file in the process's default pool)."""
    if not _compiled:
        folder = tmp_path_factory.mktemp("proto")
        (folder / "dlo_issue47_orders.proto").write_text(PROTO)
        assert protoc.main(["protoc", f"-I{folder}", f"--python_out={folder}", "--include_imports",
                            f"--descriptor_set_out={folder / 'orders.pb'}",
                            str(folder / "dlo_issue47_orders.proto")]) == 0
        spec = importlib.util.spec_from_file_location("dlo_issue47_orders_pb2", folder / "dlo_issue47_orders_pb2.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        _compiled.update(module=module, descriptor_set=(folder / "orders.pb").read_bytes())
    return _compiled["module"], _compiled["descriptor_set"]  # type: ignore[return-value]


@pytest.fixture
def api(admin) -> APIClient:
    client = APIClient()
    client.force_authenticate(admin)
    return client


@pytest.fixture
def uploaded(generated, api):
    _, descriptor_set = generated
    answer = api.post("/api/body-schemas/", {"kind": "protobuf", "name": "orders.proto", "reason": "orders' bodies",
                                             "base64": base64.b64encode(descriptor_set).decode()}, format="json")
    assert answer.status_code == 201, answer.content
    assert answer.json()["declares"] == ["shop.Customer", "shop.Order"]
    return generated[0]


def _order(module, **fields) -> bytes:
    return module.Order(**fields).SerializeToString()


@pytest.fixture
def viewer(django_user_model) -> Client:
    user = django_user_model.objects.create_user("vera", password="vera-pass-123")
    set_role(user, VIEWER)
    client = Client()
    client.force_login(user)
    return client


def test_the_fields_are_shown_found_and_hidden_from_a_viewer(uploaded, captured, signed_in, viewer):
    _, _, (eve, bob) = captured("orders", [
        (_order(uploaded, id="A-1006", cents=4200, customer=uploaded.Customer(email="eve@example.com", tier="gold"),
                items=["lamp"]), TYPE_HEADER, PROTOBUF),
        (_order(uploaded, id="B-7", cents=1), TYPE_HEADER, PROTOBUF)])
    fill_search_rows()

    page = signed_in.get(reverse("letter", args=[eve.pk])).content.decode()
    assert "Stored as Protobuf; shown read, as JSON." in page and "A-1006" in page and "lamp" in page
    assert signed_in.get(f"/api/letters/{eve.pk}/").json()["decoded"]["value"] == {
        "id": "A-1006", "cents": "4200", "customer": {"email": "eve@example.com", "tier": "gold"}, "items": ["lamp"]}
    assert [row["id"] for row in signed_in.get("/api/letters/", {"q": "A-1006"}).json()["results"]] == [eve.pk]
    assert [row["id"] for row in signed_in.get("/api/letters/", {"q": "B-7"}).json()["results"]] == [bob.pk]

    do_set_redaction_rule(actor="tests", kind="json_path", pattern="$.customer.email")
    page = viewer.get(reverse("letter", args=[eve.pk])).content.decode()
    assert "A-1006" in page and "eve@example.com" not in page
    shown = viewer.get(f"/api/letters/{eve.pk}/").json()
    assert shown["decoded"]["value"]["customer"]["tier"] == "gold" and "eve@example.com" not in str(shown)


def test_a_rule_moves_a_letter_by_a_protobuf_field_in_the_round_after_its_capture(uploaded, captured, api, kit):
    parked = kit.queue(kit.name("orders.gold"))
    made = api.post("/api/rules/", {
        "name": "gold orders wait", "match": {"body_path": {"path": "$.customer.tier", "value": "gold"}},
        "action": {"kind": "forward", "target": parked}, "reason": "gold customers' orders are handled by hand"},
        format="json")
    assert made.status_code == 201, made.content
    enabled = api.patch(f"/api/rules/{made.json()['id']}/", {"enabled": True, "reason": "on"}, format="json")
    assert enabled.status_code == 200, enabled.content

    _, _, (gold, plain) = captured("orders", [
        (_order(uploaded, id="G-1", customer=uploaded.Customer(tier="gold")), TYPE_HEADER, PROTOBUF),
        (_order(uploaded, id="P-1", customer=uploaded.Customer(tier="plain")), TYPE_HEADER, PROTOBUF)])
    apply_rules()  # its letters' search rows may not be filled yet: the round reads their bodies
    (job,) = Job.objects.filter(actor_name="rule:gold orders wait@v1")
    assert job.selection["ids"] == [gold.pk]
    assert run_job(job.pk) == "succeeded"
    (moved,) = kit.drain(parked)
    assert uploaded.Order.FromString(moved.body).id == "G-1"
    assert DeadLetter.objects.get(pk=plain.pk).state == "held"


def test_failure_groups_split_by_a_protobuf_field(uploaded, captured, api, admin, operator, signed_in, viewer, http,
                                                  django_capture_on_commit_callbacks):
    channel = do_add_channel(actor=admin, name="ops", kind="webhook", target=http.url)
    do_subscribe(actor=admin, channel=channel, events=["group.new"], user=operator)
    with django_capture_on_commit_callbacks(execute=True):
        made = api.post("/api/body-mappings/", {
            "header": "proto-message-type", "header_value": "shop.Order", "group_path": "$.customer.tier",
            "reason": "orders fail per tier"}, format="json")
    assert made.status_code == 201 and made.json()["format"] == "", made.content
    do_set_redaction_rule(actor="tests", kind="json_path", pattern="$.customer.tier")

    _, place, letters = captured("orders", [
        (_order(uploaded, id=f"O-{n}", customer=uploaded.Customer(tier=tier)), TYPE_HEADER, PROTOBUF)
        for n, tier in enumerate(["tier-gold-7", "tier-gold-7", "tier-plain-3"])] + [
        (_order(uploaded, id="O-none"), TYPE_HEADER, PROTOBUF)])  # no customer: the envelope's group
    fill_search_rows()  # the bodies are read after the capture, and grouped then

    groups = {row["key"]: row for row in api.get("/api/groups/").json()}
    assert {key: row["count"] for key, row in groups.items()} == {
        '$.customer.tier = "tier-gold-7"': 2, '$.customer.tier = "tier-plain-3"': 1, "": 1}
    gold = groups['$.customer.tier = "tier-gold-7"']["fingerprint"]
    assert set(DeadLetter.objects.filter(fingerprint=gold).values_list("pk", flat=True)) == {
        letters[0].pk, letters[1].pk}
    assert api.get(f"/api/groups/{gold}/").json()["count"] == 2

    shown = viewer.get("/api/groups/").json()
    assert sorted(row["key"] for row in shown) == ["", '$.customer.tier = "***"', '$.customer.tier = "***"']
    page = viewer.get(reverse("groups")).content.decode()
    assert '$.customer.tier = &quot;***&quot;' in page and "tier-gold" not in page and "tier-plain" not in page
    assert "tier-gold" in signed_in.get(reverse("groups")).content.decode()  # one who may read the values

    # Each new group was told of once, after the bodies were read; the value masked as for everyone.
    assert {deliver(pk) for pk in Delivery.objects.values_list("pk", flat=True)} == {"sent"}
    told = http.json()
    assert sorted(message["details"]["key"] for message in told) == [
        "", '$.customer.tier = "***"', '$.customer.tier = "***"']
    assert all(message["event"] == "group.new" for message in told) and "tier-" not in str(told)

    # Without the mapping, the letters are one group again (their envelope's).
    with django_capture_on_commit_callbacks(execute=True):
        assert api.delete(f"/api/body-mappings/{made.json()['id']}/", {"reason": "one group"},
                          format="json").status_code == 204
    (only,) = api.get("/api/groups/").json()
    assert (only["count"], only["key"]) == (4, "")


def test_an_edit_of_the_decoded_value_reaches_the_origin_as_protobuf(uploaded, captured, signed_in, kit, viewer):
    work, _, (letter,) = captured("orders", [
        (_order(uploaded, id="A-1006", cents=4200, customer=uploaded.Customer(email="eve@example.com")),
         TYPE_HEADER, PROTOBUF)])
    value = signed_in.get(f"/api/letters/{letter.pk}/").json()["decoded"]["value"]

    refused = signed_in.post(f"/api/letters/{letter.pk}/edit-replay/",
                             {"decoded": {**value, "cents": "lots"}, "reason": "fix the amount"},
                             content_type="application/json")
    assert refused.status_code == 400 and "cents" in refused.json()["detail"], refused.content
    refused = signed_in.post(f"/api/letters/{letter.pk}/edit-replay/",
                             {"decoded": {**value, "colour": "red"}, "reason": "fix the amount"},
                             content_type="application/json")
    assert refused.status_code == 400 and "colour" in refused.json()["detail"], refused.content
    assert not Job.objects.filter(kind="edit_replay").exists()

    answer = signed_in.post(f"/api/letters/{letter.pk}/edit-replay/",
                            {"decoded": {**value, "cents": "4300"}, "reason": "the amount was a cent short"},
                            content_type="application/json")
    assert answer.status_code == 202, answer.content
    assert run_job(answer.json()["id"]) == "succeeded"
    (sent,) = kit.drain(work)
    order = uploaded.Order.FromString(sent.body)
    assert (order.id, order.cents, order.customer.email) == ("A-1006", 4300, "eve@example.com")
    assert sent.headers["proto-message-type"] == "shop.Order" and sent.content_type == "application/x-protobuf"

    # The audit keeps the diff of the decoded values; a JSON path hides a field of it from a viewer.
    diff = _edit_diff(signed_in)
    assert '+  "cents": "4300"' in diff and "eve@example.com" in diff
    do_set_redaction_rule(actor="tests", kind="json_path", pattern="$.customer.email")
    diff = _edit_diff(viewer)
    assert '+  "cents": "4300"' in diff and '"email": "***"' in diff
    assert "eve@example.com" not in _read(viewer.get(reverse("audit-export-json")))


def _edit_diff(client) -> str:
    """The body diff of the edit's audit event, in the audit's JSON export as ``client`` gets it."""
    (edit,) = [event for event in json.loads(_read(client.get(reverse("audit-export-json"))))
               if event["action"] == "edit_replay"]
    return edit["details"]["body"]["diff"]


def _read(response) -> str:
    assert response.status_code == 200
    return b"".join(response.streaming_content).decode()
