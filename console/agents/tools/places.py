"""``list_places``: the dead places the caller may see (``GET /api/places/``)."""

from __future__ import annotations

from typing import Any

from console.agents.api import Api
from console.agents.base import AgentTool


class ListPlaces(AgentTool):
    description = ("The dead places (dead-letter queues, exception destinations, dead streams) you may see, "
                   "with their broker, depth on the broker, letters held in custody, oldest letter, whether "
                   "they are kept in custody, and the origins feeding them.")

    def run(self, api: Api) -> dict[str, Any]:
        return {"places": api.get("/api/places/")}
