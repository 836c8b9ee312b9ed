"""``list_failure_groups`` and ``get_failure_group``: ``GET /api/groups/`` and
``GET /api/groups/{fingerprint}/`` (its notes, timeline and traces), sample exceptions quoted."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from console.agents.api import Api
from console.agents.base import UNTRUSTED_NOTE, AgentTool, quoted


class ListFailureGroups(AgentTool):
    description = ("Failure groups (letters that failed the same way), largest first, over the letters you may "
                   "see: count, first and last seen, origins, places, a sample exception, the split key if any, "
                   "and what people decided (status, owner, tags).")

    def run(self, api: Api,
            place: Annotated[int | None, Field(description="Only this dead place's letters")] = None,
            state: Annotated[str, Field(description="held (default) or any, or another state")] = "",
            status: Annotated[str, Field(description="new, investigating, fixed, resolved or ignored")] = "",
            ) -> dict[str, Any]:
        rows = api.get("/api/groups/", {"place": place, "state": state, "status": status})
        return {"groups": [quoted(row) for row in rows], "note": UNTRUSTED_NOTE}


class GetFailureGroup(AgentTool):
    description = ("One failure group's story: its counts and sample exception, its notes, its timeline (what "
                   "was done to it and by whom) and how many distributed traces its letters failed in.")

    def run(self, api: Api, fingerprint: Annotated[str, Field(description="The group's fingerprint")]
            ) -> dict[str, Any]:
        return {"group": quoted(api.get(f"/api/groups/{fingerprint}/")), "note": UNTRUSTED_NOTE}
