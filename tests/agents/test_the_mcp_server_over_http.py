"""Issue 49 over Streamable HTTP at ``/mcp/`` on the console itself: ``gunicorn console.wsgi`` (the
web process as deployed) on the test database, and the official SDK's ``streamable_http_client``
with an operator's API token in its ``Authorization`` header: the tools are listed, letters
searched and read, a group read, a rule dry-run; a request without credentials is refused with 401 before the
MCP server reads it; a viewer's token reads masked values only."""

from __future__ import annotations

import json

import anyio
import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from rest_framework.authtoken.models import Token

from console.access.roles import VIEWER, set_role
from console.services.redaction import do_set_redaction_rule
from console.services.rules.changes import do_create_rule
from tests.access.masked_value import CARD, CARD_RULE, leaks
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db(transaction=True)  # the web process is another process


def _over_http(base: str, user, calls):
    key = Token.objects.get_or_create(user=user)[0].key

    async def main():
        client = create_mcp_http_client(headers={"Authorization": f"Token {key}"})
        async with client, streamable_http_client(f"{base}/mcp/", http_client=client) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                return await calls(session)

    return anyio.run(main)


def test_an_agent_reads_over_http_with_its_token(web, memory_broker, operator, django_user_model, admin):
    place = memory_place(memory_broker)
    letter = store_letter(place, json.dumps({"card": CARD}).encode(), exception_type="CardDeclined")
    rule = do_create_rule(actor=operator, name="cards", match={"exception_type": "CardDeclined"},
                          action={"kind": "mark_failed"}, reason="cards never pass")

    async def calls(session):
        tools = [tool.name for tool in (await session.list_tools()).tools]
        found = await session.call_tool("search_letters", {"place": place.pk})
        read = await session.call_tool("get_letter", {"letter_id": letter.pk})
        group = await session.call_tool("get_failure_group", {"fingerprint": letter.fingerprint})
        dry = await session.call_tool("dry_run_rule", {"rule_id": rule.pk})
        return tools, found, read, group, dry

    tools, found, read, group, dry = _over_http(web, operator, calls)
    assert not dry.is_error and json.loads(dry.content[0].text)["dry_run"]
    assert {"search_letters", "get_letter", "replay_letters"} <= set(tools)
    assert [row["id"] for row in json.loads(found.content[0].text)["letters"]] == [letter.pk]
    assert CARD in read.content[0].text and json.loads(group.content[0].text)["group"]["count"] == 1

    refused = httpx.post(f"{web}/mcp/", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                         headers={"Accept": "application/json, text/event-stream"})
    assert refused.status_code == 401 and "Authorization" in refused.text
    wrong = httpx.post(f"{web}/mcp/", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                       headers={"Authorization": "Token not-a-token", "Accept": "application/json"})
    assert wrong.status_code == 401
    elsewhere = httpx.post(f"{web}/mcp/", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                           headers={"Host": "evil.example", "Authorization": "Token x"})
    assert elsewhere.status_code == 400 and "ALLOWED_HOSTS" in elsewhere.text

    viewer = django_user_model.objects.create_user("vera", password="vera-pass-123")
    set_role(viewer, VIEWER)
    do_set_redaction_rule(actor=admin, kind=CARD_RULE[0], pattern=CARD_RULE[1])

    async def masked(session):
        return [await session.call_tool("get_letter", {"letter_id": letter.pk}),
                await session.call_tool("search_letters", {"q": "card"})]

    for answer in _over_http(web, viewer, masked):
        assert not answer.is_error and leaks(answer.content[0].text) == []
