"""``search_letters`` and ``get_letter``: the Letters page's filters over ``GET /api/letters/``,
and one letter (``GET /api/letters/{id}/``), what their messages carried quoted apart."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from console.agents.api import Api
from console.agents.base import UNTRUSTED_NOTE, AgentTool, quoted


class SearchLetters(AgentTool):
    description = ("Search the dead letters you may see, oldest first, a page at a time (pass `cursor` from the "
                   "previous answer's `next_cursor`). Every filter of the Letters page: place and broker ids, "
                   "state (held, replaying, replayed, failed, purged, or any), origin, reason, exception type, "
                   "failure group fingerprint, a header (and its value), text in the body (q), captured since/until "
                   "(ISO 8601), trace id. It counts the matching letters (exactly up to 10,000).")

    def run(self, api: Api,
            place: Annotated[int | None, Field(description="A dead place's id")] = None,
            broker: Annotated[int | None, Field(description="A broker's id")] = None,
            state: Annotated[str, Field(description="held (default), replaying, replayed, failed, purged or any")] = "",
            origin: Annotated[str, Field(description="Words of the origin queue or address")] = "",
            reason: Annotated[str, Field(description="Why it died: rejected, expired, delivery_limit...")] = "",
            exception: Annotated[str, Field(description="Words of the exception type")] = "",
            fingerprint: Annotated[str, Field(description="A failure group's fingerprint (or its start)")] = "",
            header: Annotated[str, Field(description="Has this header")] = "",
            header_value: Annotated[str, Field(description="header=value")] = "",
            q: Annotated[str, Field(description="Text contained in the body")] = "",
            since: Annotated[str, Field(description="Captured at or after (ISO 8601)")] = "",
            until: Annotated[str, Field(description="Captured before (ISO 8601)")] = "",
            trace_id: Annotated[str, Field(description="A distributed trace's id")] = "",
            cursor: Annotated[int | None, Field(description="next_cursor of the previous page")] = None,
            page_size: Annotated[int, Field(ge=1, le=100, description="Letters per page")] = 25,
            ) -> dict[str, Any]:
        answer = api.get("/api/letters/", {
            "place": place, "broker": broker, "state": state, "origin": origin, "reason": reason,
            "exception": exception, "fingerprint": fingerprint, "header": header, "header_value": header_value,
            "q": q, "since": since, "until": until, "trace_id": trace_id, "cursor": cursor, "page_size": page_size,
            "count": "true"})
        next_link = answer.get("next")
        following = None
        if next_link:
            following = next((part.split("=", 1)[1] for part in str(next_link).split("?", 1)[-1].split("&")
                              if part.startswith("cursor=")), None)
        return {"letters": [quoted(row) for row in answer["results"]],
                "count": answer.get("count"), "count_exact": answer.get("count_exact"),
                "next_cursor": int(following) if following and following.isdigit() else None,
                "note": UNTRUSTED_NOTE}


class GetLetter(AgentTool):
    description = ("One dead letter you may see, whole: where it died and why (origin, reason, deaths, "
                   "exception), its state and history, and what its message carried (body, decoded body, "
                   "headers) under untrusted_content, masked as you are shown it.")

    def run(self, api: Api, letter_id: Annotated[int, Field(ge=1, description="The letter's id")]) -> dict[str, Any]:
        return {"letter": quoted(api.get(f"/api/letters/{letter_id}/")), "note": UNTRUSTED_NOTE}
