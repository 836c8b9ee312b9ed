"""The acting tools: replay, move, mark failed and purge letters, each through the console's one
door for jobs (``POST /api/jobs/``) in two calls; edit and replay one letter the same way
(``POST /api/letters/{id}/edit-replay/``); and create a draft rule (which acts on nothing until a
person enables it) with its dry run. The first (no ``preview_token``) answers the
job's preview (``POST /api/jobs/preview/``: how many letters, from which origins, a sample, or
the refusal) and a preview token; only a second call with that token and a reason asks for the
job, on exactly the letters previewed. Approvals apply as for people (a purge waits for a
second person). A token without the ``mcp:act`` scope is refused by every acting tool."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field

from console.agents import previews
from console.agents.accounts import may_act
from console.agents.api import Api, ApiRefused
from console.agents.base import AgentTool

Letters = Annotated[list[int] | None, Field(description="The letters' ids (or give a filter)")]
Filter = Annotated[dict[str, str] | None, Field(description="A letter filter, as search_letters takes it "
                                                            "(place, origin, exception, fingerprint...)")]
Token = Annotated[str, Field(description="The preview_token the first call answered: give it to act")]
Reason = Annotated[str, Field(description="Why, in the words of the person you act for (audited)")]

NOT_ALLOWED = ("this token may not act through MCP (it lacks the mcp:act scope): read and propose; a person "
               "acts, or makes a token with 'Agents may act' on the tokens page")


class JobTool(AgentTool):
    acts = True
    #: The job kind it asks for (console.jobs.kinds).
    action: ClassVar[str] = ""

    def two_steps(self, api: Api, letters: list[int] | None, filter: dict[str, str] | None,
                  preview_token: str, reason: str, asks: dict[str, Any]) -> dict[str, Any]:
        if not may_act(api.authorization):
            raise ApiRefused(403, NOT_ALLOWED)
        if not preview_token:
            if (letters is None) == (filter is None):
                raise ApiRefused(400, "give letters (ids) or a filter, not both")
            chosen = {"letters": letters} if letters is not None else {"filter": filter}
            preview = api.post("/api/jobs/preview/", chosen)
            return self.offer(api, {key: preview[key] for key in ("count", "by_origin", "sample", "arrived_since")
                                    if key in preview}, preview, asks,
                              f"{self.action.replace('_', ' ')} these {preview['count']} letters")
        found = self.previewed(api, preview_token, reason)
        job = api.post("/api/jobs/", {"action": self.action, "selection": found["selection"], "reason": reason,
                                      **found["asks"]})
        return {"job": job, "note": "A job waiting for approval acts once a second person approves it."}

    def offer(self, api: Api, shown: dict[str, Any], preview: dict[str, Any], asks: dict[str, Any],
              what: str) -> dict[str, Any]:
        """The first call's answer: what would be done (``shown``) and the token that does it."""
        return {"preview": shown,
                "preview_token": previews.made(self.action, api.authorization, preview, asks),
                "to_act": f"Nothing is done yet. To {what}, call again with this preview_token and a reason "
                          "(a person's).",
                "expires_in_seconds": previews.PREVIEW_SECONDS}

    def previewed(self, api: Api, preview_token: str, reason: str) -> dict[str, Any]:
        """The second call: its reason, and what its token was made for."""
        if not reason.strip():
            raise ApiRefused(400, "a reason is needed to act (it is audited)")
        try:
            return previews.read(preview_token, self.action, api.authorization)
        except previews.PreviewRefused as exc:
            raise ApiRefused(400, str(exc)) from None


class LettersJobTool(JobTool):
    """The tool of a job kind that asks for nothing more than its letters."""

    def run(self, api: Api, letters: Letters = None, filter: Filter = None, preview_token: Token = "",
            reason: Reason = "") -> dict[str, Any]:
        return self.two_steps(api, letters, filter, preview_token, reason, {})


class ReplayLetters(LettersJobTool):
    action = "replay"
    description = ("Replay letters to the subscription each died in. Two calls: first without preview_token "
                   "(nothing happens; you get the preview and a token), then with the token and a reason.")


class MoveLetters(JobTool):
    action = "move"
    description = ("Move letters to another queue of their broker. Two calls: preview, then act with the "
                   "preview_token and a reason.")

    def run(self, api: Api, target: Annotated[str, Field(description="The queue to move them to")],
            letters: Letters = None, filter: Filter = None, preview_token: Token = "",
            reason: Reason = "") -> dict[str, Any]:
        return self.two_steps(api, letters, filter, preview_token, reason, {"target": target})


class MarkLettersFailed(LettersJobTool):
    action = "mark_failed"
    description = ("Mark letters failed (kept, never replayed). Two calls: preview, then act with the "
                   "preview_token and a reason.")


class PurgeLetters(LettersJobTool):
    action = "purge"
    description = ("Purge letters (their bodies are erased; cannot be undone). Two calls: preview, then act with "
                   "the preview_token and a reason; the job then waits for a second person's approval.")


class EditAndReplay(JobTool):
    action = "edit_replay"
    description = ("Edit one letter's body and replay the copy to its origin (the original stays as it is). Give "
                   "`body` (text) or `decoded` (the edited value of a body the console reads in its format, as "
                   "get_letter's decoded shows it). Two calls: first without preview_token (you get the letter's "
                   "origin and a token), then with the token and a reason.")

    def run(self, api: Api, letter_id: Annotated[int, Field(ge=1, description="The letter's id")],
            body: Annotated[str, Field(description="The edited body, as text")] = "",
            decoded: Annotated[Any, Field(description="Instead of body: the edited decoded value")] = None,
            preview_token: Token = "", reason: Reason = "") -> dict[str, Any]:
        if not may_act(api.authorization):
            raise ApiRefused(403, NOT_ALLOWED)
        if not preview_token:
            if (body == "") == (decoded is None):  # plain str: the SDK leaves JSON-looking text as text
                raise ApiRefused(400, "give the edited body or the edited decoded value, not both")
            letter = api.get(f"/api/letters/{letter_id}/")
            edit = {"body": body} if body else {"decoded": decoded}
            preview = {"selection": {"ids": [letter_id]}, "edit": edit}
            return self.offer(api, {"letter": letter_id, "origin_queue": letter.get("origin_queue"),
                                    "state": letter.get("state")}, preview, edit, "replay the edited copy")
        found = self.previewed(api, preview_token, reason)
        if found["selection"].get("ids") != [letter_id]:
            raise ApiRefused(400, "this preview token was made for another letter: preview again")
        job = api.post(f"/api/letters/{letter_id}/edit-replay/", {**found["asks"], "reason": reason})
        return {"job": job}


class CreateDraftRule(AgentTool):
    acts = True
    description = ("Create a handling rule as a draft (it acts on nothing until a person enables it), and answer "
                   "its dry run: how many held letters it would match now and what it would do. `match` and "
                   "`action` as the rules API takes them, e.g. match {\"exception_type\": \"TimeoutError\"}, "
                   "action {\"kind\": \"retry\", \"delays\": [60, 300]}.")

    def run(self, api: Api, name: Annotated[str, Field(description="The rule's name")],
            match: Annotated[dict[str, Any], Field(description="What letters it takes")],
            action: Annotated[dict[str, Any], Field(description="What it does with them")],
            reason: Reason = "") -> dict[str, Any]:
        if not may_act(api.authorization):
            raise ApiRefused(403, NOT_ALLOWED)
        rule = api.post("/api/rules/", {"name": name, "match": match, "action": action, "reason": reason})
        return {"rule": rule, "dry_run": api.post(f"/api/rules/{rule['id']}/dry-run/", {}),
                "note": "A draft: a person reviews and enables it."}
