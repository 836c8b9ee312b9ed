"""Preview tokens: an acting tool's first call answers what it would do (the job's preview: count,
origins, a sample, refusals) and a token naming exactly that (the tool, the frozen selection,
what the kind asks for) for this caller, signed with the console's secret and good for
PREVIEW_SECONDS. Only a second call with that token and a reason acts, on the letters previewed,
never on more: whatever a letter says cannot make a call act."""

from __future__ import annotations

import hashlib
from typing import Any

from django.core import signing

#: How long a preview token may be used to act.
PREVIEW_SECONDS = 15 * 60
_SALT = "dlo.agents.preview"


class PreviewRefused(Exception):
    """A preview token that is not this tool's, this caller's, or is too old or altered."""


def made(tool: str, caller: str, preview: dict[str, Any], asks: dict[str, Any]) -> str:
    return signing.dumps({"tool": tool, "caller": _caller(caller), "selection": preview["selection"], "asks": asks},
                         salt=_SALT, compress=True)


def read(token: str, tool: str, caller: str) -> dict[str, Any]:
    """The selection and asks a token names, for ``tool`` and ``caller``."""
    try:
        found = signing.loads(token, salt=_SALT, max_age=PREVIEW_SECONDS)
    except signing.SignatureExpired:
        raise PreviewRefused("the preview token has expired: preview again") from None
    except signing.BadSignature:
        raise PreviewRefused("this is not a preview token the console made: preview first") from None
    if found.get("tool") != tool or found.get("caller") != _caller(caller):
        raise PreviewRefused(f"this preview token was not made for {tool} by this caller: preview again")
    return found


def _caller(authorization: str) -> str:
    return hashlib.sha256(authorization.encode()).hexdigest()[:24]
