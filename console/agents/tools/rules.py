"""``dry_run_rule``: ``POST /api/rules/{id}/dry-run/``, which letters a handling rule would decide
now and what it would do, changing nothing."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from console.agents.api import Api
from console.agents.base import AgentTool


class DryRunRule(AgentTool):
    description = ("A handling rule's dry run: how many of the held letters it would match now, a sample, and "
                   "what it would do with them. Nothing changes.")

    def run(self, api: Api, rule_id: Annotated[int, Field(ge=1, description="The rule's id")]) -> dict[str, Any]:
        return {"dry_run": api.post(f"/api/rules/{rule_id}/dry-run/", {})}
