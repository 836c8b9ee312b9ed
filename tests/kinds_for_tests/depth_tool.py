"""A test-only MCP tool, which no file under console/ names: one place's depth, asked of the API
(tests/agents/test_a_new_tool_is_one_room.py)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from console.agents.api import Api
from console.agents.base import AgentTool


class PlaceDepth(AgentTool):
    description = "How many messages one dead place holds on its broker."

    def run(self, api: Api, place_id: Annotated[int, Field(ge=1, description="The place's id")]) -> dict[str, Any]:
        place = api.get(f"/api/places/{place_id}/")
        return {"place": place["name"], "depth": place["depth"]}
