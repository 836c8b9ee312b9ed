"""``list_jobs`` and ``get_job``: ``GET /api/jobs/`` and ``GET /api/jobs/{id}/``, jobs and their
progress."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from console.agents.api import Api
from console.agents.base import AgentTool


class ListJobs(AgentTool):
    description = "Recent jobs (captures, replays, moves, purges...) you may see, newest first, with their progress."

    def run(self, api: Api) -> dict[str, Any]:
        answer = api.get("/api/jobs/")
        return {"jobs": answer["results"] if isinstance(answer, dict) and "results" in answer else answer}


class GetJob(AgentTool):
    description = "One job: its kind, status, who asked and why, its progress and outcome."

    def run(self, api: Api, job_id: Annotated[int, Field(ge=1, description="The job's id")]) -> dict[str, Any]:
        return {"job": api.get(f"/api/jobs/{job_id}/")}
