"""The console for agents: an MCP server (the official Python SDK, ``mcp``) whose tools are the
console's own API, called in-process with the agent's credentials (console.agents.api), so an
agent can see and do exactly what its person or script account can through the API: the same
permissions, scopes, masking, filters and refusals, nothing of its own.

Each tool is one room: a module under ``tools/`` (a console.agents.base.AgentTool) and a line
below (or :func:`register`, for one that lives elsewhere, a test's own). console.agents.server
builds the MCP server from this registry; ``manage.py mcp --token-file ...`` serves it over
stdio. What a letter carries comes back in a field of its own (``untrusted_content``), quoted
data for the model, never mixed into what the tool says.
"""

from __future__ import annotations

from console.agents.base import AgentTool
from console.kinds import Kinds, instance

#: tool name -> dotted path of its AgentTool class.
TOOLS: Kinds[AgentTool] = Kinds("MCP tool", {
    "list_places": "console.agents.tools.places.ListPlaces",
    "list_origins": "console.agents.tools.origins.ListOrigins",
    "search_letters": "console.agents.tools.letters.SearchLetters",
    "get_letter": "console.agents.tools.letters.GetLetter",
    "list_failure_groups": "console.agents.tools.groups.ListFailureGroups",
    "get_failure_group": "console.agents.tools.groups.GetFailureGroup",
    "dry_run_rule": "console.agents.tools.rules.DryRunRule",
    "list_jobs": "console.agents.tools.jobs.ListJobs",
    "get_job": "console.agents.tools.jobs.GetJob",
    "replay_letters": "console.agents.tools.acting.ReplayLetters",
    "move_letters": "console.agents.tools.acting.MoveLetters",
    "mark_letters_failed": "console.agents.tools.acting.MarkLettersFailed",
    "purge_letters": "console.agents.tools.acting.PurgeLetters",
    "edit_and_replay": "console.agents.tools.acting.EditAndReplay",
    "create_draft_rule": "console.agents.tools.acting.CreateDraftRule",
}, make=instance)


def register(name: str, dotted: str) -> None:
    TOOLS.register(name, dotted)


def unregister(name: str) -> None:
    TOOLS.unregister(name)
