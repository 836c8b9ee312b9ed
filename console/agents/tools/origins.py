"""``list_origins``: ``GET /api/origins/``, the origins letters died in, each with its breaker,
its streak of failures and the broker's effective dead-letter policy for it."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from console.agents.api import Api
from console.agents.base import UNTRUSTED_NOTE, AgentTool


class ListOrigins(AgentTool):
    description = ("The origins (queues, subscriptions, consumers) letters died in that you may see: whether their "
                   "breaker is open and why, their streak of failures, and the broker's effective policy for them "
                   "(where dead letters go, delivery limits, TTLs). The streak's exception is under "
                   "untrusted_content.")

    def run(self, api: Api, broker: Annotated[int | None, Field(description="Only this broker's")] = None
            ) -> dict[str, Any]:
        rows = api.get("/api/origins/", {"broker": broker})
        quoted = [{**{k: v for k, v in row.items() if k not in ("streak_exception", "breaker_reason")},
                   "untrusted_content": {k: row[k] for k in ("streak_exception", "breaker_reason") if k in row}}
                  for row in rows]
        return {"origins": quoted, "note": UNTRUSTED_NOTE}
