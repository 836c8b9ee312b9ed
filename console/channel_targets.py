"""What of a notification channel's target may be shown, and what is a credential (finding 5).

A webhook URL often is its own password: ``https://user:password@host/...`` carries one in its
userinfo, ``...?token=...`` in its query, and the incoming webhooks of Slack, Discord, Teams
(Office 365 connectors and Power Automate workflows) and Mattermost carry it in their path.
:func:`split_target` gives the form shown to everyone (admins and the audit included), with
each of those parts replaced by ``***``, and says whether anything was hidden; the whole
target is then kept encrypted (console.models.Channel) and used only to deliver.

Pure functions: the migration that moved existing targets' credentials uses them too.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

MASK = "***"


def _path_shown(host: str, path: str) -> str:
    """The path, with the secret part of a known webhook host's replaced by the mask."""
    if host == "hooks.slack.com" or host.endswith((".webhook.office.com", ".logic.azure.com")) \
            or host in ("webhook.office.com", "logic.azure.com"):
        return f"/{MASK}" if path not in ("", "/") else path
    for marker in ("/api/webhooks/", "/hooks/"):  # Discord (and its forks); Mattermost, any host
        head, found, tail = path.partition(marker)
        if found and tail:
            return f"{head}{marker}{MASK}"
    return path


def _query_shown(query: str) -> str:
    """Every value of the query replaced by the mask (its names stay); a bare word is masked whole."""
    shown = []
    for piece in query.split("&"):
        name, equals, value = piece.partition("=")
        if equals:
            shown.append(f"{name}={MASK}" if value else piece)
        else:
            shown.append(MASK if piece else piece)
    return "&".join(shown)


def split_target(target: str) -> tuple[str, bool]:
    """``(what may be shown, whether it hid a credential)`` of a channel's target. A target that
    is not an http(s) URL (an e-mail address) is shown whole."""
    scheme = target.partition("://")[0].lower() if "://" in target else ""
    if scheme not in ("http", "https"):
        return target, False
    try:
        parts = urlsplit(target)
        parts.port  # noqa: B018 - a port that is no number makes the URL no URL
    except ValueError:  # nothing of it can be told apart: all of it is hidden
        return f"{scheme}://{MASK}", True
    _, at, hostport = parts.netloc.rpartition("@")
    path = _path_shown((parts.hostname or "").lower(), parts.path)
    query = _query_shown(parts.query)
    hidden = bool(at) or path != parts.path or query != parts.query or bool(parts.fragment)
    if not hidden:
        return target, False
    return urlunsplit((parts.scheme, f"{MASK}@{hostport}" if at else hostport, path, query,
                       MASK if parts.fragment else "")), True
