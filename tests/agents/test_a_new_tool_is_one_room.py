"""A new MCP tool is one room (console/agents): a module (tests/kinds_for_tests/depth_tool.py),
once registered, appears in ``tools/list`` with its schema and answers through the caller's API,
as the console's own tools do; a place outside the caller's scope is refused as the API refuses
it. An agent past DLO_MCP_CALLS_PER_MINUTE is refused, told how long to wait. The SDK's own
client, in memory."""

from __future__ import annotations

import json

import anyio
import pytest
from mcp import Client
from rest_framework.authtoken.models import Token

from console.agents import register, unregister
from console.agents.api import Api
from console.agents.server import Session, build
from console.models import RoleScope
from tests.web.factory import memory_place

pytestmark = pytest.mark.django_db(transaction=True)  # the tool's API call runs on another thread


@pytest.fixture
def depth_tool():
    register("place_depth", "tests.kinds_for_tests.depth_tool.PlaceDepth")
    yield
    unregister("place_depth")


def test_a_registered_tool_is_listed_and_answers(depth_tool, memory_broker, operator):
    mine, theirs = memory_place(memory_broker, "mine"), memory_place(memory_broker, "theirs")
    RoleScope.objects.create(user=operator, place=mine)
    api = Api(f"Token {Token.objects.create(user=operator).key}")

    async def calls():
        async with Client(build(api, Session())) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            return (tools, await client.call_tool("place_depth", {"place_id": mine.pk}),
                    await client.call_tool("place_depth", {"place_id": theirs.pk}))

    tools, answer, refused = anyio.run(calls)
    assert tools["place_depth"].input_schema["properties"]["place_id"]["minimum"] == 1
    assert tools["place_depth"].description == "How many messages one dead place holds on its broker."
    assert json.loads(answer.content[0].text)["place"] == "mine.dlq"
    assert refused.is_error and "404" in refused.content[0].text


def test_an_agent_past_its_rate_is_told_to_wait(memory_broker, operator, settings):
    settings.DLO_MCP_CALLS_PER_MINUTE = 3
    place = memory_place(memory_broker, "mine")
    api = Api(f"Token {Token.objects.create(user=operator).key}")
    session = Session()

    async def calls():
        async with Client(build(api, session)) as client:
            return [await client.call_tool("list_places", {}) for _ in range(4)]

    answers = anyio.run(calls)
    assert [answer.is_error for answer in answers] == [False, False, False, True]
    assert "at most 3 a minute" in answers[3].content[0].text and place.name in answers[0].content[0].text
    assert (session.calls["list_places"], session.refused["list_places"]) == (3, 1)
