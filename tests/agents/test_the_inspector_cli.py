"""Issue 49 with the MCP Inspector from npm (tests/mcp_inspector, in its CLI mode), a client
nobody here wrote, against ``/mcp/`` on the console's web process: ``tools/list`` names the tools,
and one ``tools/call`` reads a letter with the operator's token."""

from __future__ import annotations

import json
import subprocess

import pytest
from rest_framework.authtoken.models import Token

from tests.web.factory import memory_place, store_letter
from tests.workers import PROJECT

pytestmark = pytest.mark.django_db(transaction=True)  # the web process is another process

INSPECTOR = PROJECT / "tests" / "mcp_inspector" / "node_modules" / ".bin" / "mcp-inspector"


def _inspect(web: str, key: str, *arguments: str) -> dict:
    done = subprocess.run([str(INSPECTOR), "--cli", f"{web}/mcp/", "--transport", "http",
                           "--header", f"Authorization: Token {key}", *arguments],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    return json.loads(done.stdout)


def test_the_inspector_lists_the_tools_and_calls_one(web, memory_broker, operator):
    letter = store_letter(memory_place(memory_broker), b'{"order": 7}', exception_type="OrderTimeout")
    key = Token.objects.create(user=operator).key
    listed = _inspect(web, key, "--method", "tools/list")
    names = {tool["name"] for tool in listed["tools"]}
    assert {"search_letters", "get_letter", "list_failure_groups", "replay_letters"} <= names
    called = _inspect(web, key, "--method", "tools/call", "--tool-name", "get_letter",
                      "--tool-arg", f"letter_id={letter.pk}")
    answer = json.loads(called["content"][0]["text"])
    assert answer["letter"]["id"] == letter.pk
    assert answer["letter"]["untrusted_content"]["exception_type"] == "OrderTimeout"
