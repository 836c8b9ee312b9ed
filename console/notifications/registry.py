"""Channel kind -> its class (console.kinds: by dotted path, imported on first use, so Apprise's
plugins load only where an Apprise channel is checked or sent to)."""

from __future__ import annotations

from console.kinds import Kinds, instance
from console.notifications.kinds.base import ChannelKind, NotifyError

KINDS: Kinds[ChannelKind] = Kinds("channel kind", {
    "webhook": "console.notifications.kinds.webhook.Webhook",
    "slack": "console.notifications.kinds.slack.Slack",
    "email": "console.notifications.kinds.email.Email",
    "apprise": "console.notifications.kinds.apprise.Apprise",
}, unknown=lambda name, known: NotifyError(f"kind must be one of {', '.join(known)}"), make=instance)


def kind_choices() -> list[tuple[str, str]]:
    """``(kind, label)`` for forms, labelled as Django labels choices, without importing any kind."""
    return [(kind, kind.replace("_", " ").title()) for kind in KINDS]


def kind_of(kind: str) -> ChannelKind:
    """The kind named ``kind``; NotifyError naming the known ones for any other."""
    return KINDS.get(kind)
