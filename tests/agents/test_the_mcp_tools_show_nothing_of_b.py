"""Issue 49's scope walk over every MCP read tool and resource: an agent with the token of an
operator limited to place A reads nothing of place B through any of them (B's letters, groups,
origins, exceptions), and a B letter or group asked for by id is refused as the API refuses it.
The triage prompt proposes and acts on nothing. The SDK's own client, in memory."""

from __future__ import annotations

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from console.agents import TOOLS
from console.agents.api import Api
from console.agents.server import Session, build
from console.models import Job
from console.services.tokens import do_create_token
from tests.access.conftest import B_SECRETS, people, places_a_and_b, shows_nothing_of_b  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db(transaction=True)  # the tools' API calls run on worker threads


def test_an_agent_limited_to_a_reads_nothing_of_b(places_a_and_b):  # noqa: F811
    otto = places_a_and_b.otto
    api = Api(f"Token {do_create_token(actor=otto, mcp_act=True).key}")  # acting tools answer too
    b_letter = places_a_and_b.b_letter
    read_tools = {name: {} for name in TOOLS if not TOOLS.get(name).acts}
    read_tools.update(get_letter={"letter_id": places_a_and_b.a_letter.pk},
                      get_failure_group={"fingerprint": places_a_and_b.a_letter.fingerprint},
                      get_job={"job_id": 1}, dry_run_rule={"rule_id": 1})

    async def calls():
        async with Client(build(api, Session())) as client:
            answers = {name: await client.call_tool(name, arguments) for name, arguments in read_tools.items()}
            answers["letter of b"] = await client.call_tool("get_letter", {"letter_id": b_letter.pk})
            answers["group of b"] = await client.call_tool("get_failure_group", {"fingerprint": b_letter.fingerprint})
            answers["search b"] = await client.call_tool("search_letters", {"place": places_a_and_b.b.pk})
            try:
                answers["resource of b"] = await client.read_resource(f"letter://{b_letter.pk}")
            except MCPError as exc:  # a resource the API refuses is the read's error
                answers["resource of b"] = str(exc)
            answers["triage"] = await client.get_prompt("triage", {"since": "yesterday"})
            for name in TOOLS:  # every acting tool, on B's letter: refused, naming nothing of B
                if TOOLS.get(name).acts:
                    answers[f"{name} on b"] = await client.call_tool(name, _acting(name, b_letter))
            return answers

    answers = anyio.run(calls)
    assert isinstance(answers["resource of b"], str)
    for answer in answers.values():
        shows_nothing_of_b(_text(answer))
    assert answers["letter of b"].is_error and "404" in answers["letter of b"].content[0].text
    assert answers["group of b"].is_error and "404" in answers["group of b"].content[0].text
    assert not answers["get_letter"].is_error and "OrderTimeout" in answers["get_letter"].content[0].text
    assert "act on nothing" in answers["triage"].messages[0].content.text
    acting = [name for name in answers if name.endswith(" on b")]
    assert len(acting) >= 6 and all(answers[name].is_error for name in acting if name != "create_draft_rule on b")
    assert not Job.objects.exists()
    assert B_SECRETS  # what the walk looked for


def _text(answer) -> str:
    """What an answer says: a tool's, a resource's, a prompt's, or an error's."""
    if isinstance(answer, str):
        return answer
    if getattr(answer, "contents", None):
        return answer.contents[0].text
    if getattr(answer, "messages", None):
        return answer.messages[0].content.text
    return answer.content[0].text


def _acting(name: str, letter) -> dict:
    """An acting tool's arguments aimed at ``letter`` (what it takes of them)."""
    given = {"letters": [letter.pk], "target": "billing.elsewhere", "letter_id": letter.pk, "body": "{}",
             "name": "b's rule", "match": {"origin": "billing"}, "action": {"kind": "mark_failed"}}
    return {key: value for key, value in given.items() if key in _takes(name)}


def _takes(name: str) -> set[str]:
    import inspect

    return set(inspect.signature(TOOLS.get(name).run).parameters) - {"api"}
