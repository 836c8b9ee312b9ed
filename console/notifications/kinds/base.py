"""What every kind of notification channel is, in the healthchecks manner: a small base asking
each kind for two things, the two errors a kind raises, and what kinds share.

- :meth:`ChannelKind.parse` checks a target typed for a channel of the kind and says what to
  keep: the target, and the secret when the target itself is one (an Apprise URL).
- :meth:`ChannelKind.send` makes one attempt at a delivery. It raises :class:`TransportError`
  when the receiver would not take it (``permanent`` when trying again cannot help), or lets a
  library's own error through (a refused connection, SMTP's); either is written on the
  delivery, which is tried again unless it was permanent (console.notifications.delivery).

What a target shows is the same for every kind: the credentials of a URL as ``***``
(console.channel_targets, applied by console.models.Channel.set_target), so no kind can
forget it.
"""

from __future__ import annotations

from typing import ClassVar

import httpx

from console.models import Channel, Delivery
from console.refusals import Refusal

#: Seconds a receiver has to answer one HTTP attempt.
TIMEOUT = 10.0


class NotifyError(Refusal):
    """A channel or subscription the console refuses, with a message for the admin."""


class TransportError(Exception):
    """A receiver did not take a message. ``permanent``: trying again cannot help, so the
    delivery fails now instead of after DLO_NOTIFY_ATTEMPTS attempts."""

    def __init__(self, message: str, permanent: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.permanent = permanent


class ChannelKind:
    """One kind of channel. Stateless: the registry (console.notifications.registry) keeps one
    of each, imported on first use."""

    #: The kind's name, as stored in ``Channel.kind`` and taken by the API.
    name: ClassVar[str]

    def parse(self, target: str) -> tuple[str, str | None]:
        """``(target to keep, the secret the target is or None)`` of a target typed for this
        kind; NotifyError, with what is wrong, when it is no target of this kind."""
        raise NotImplementedError

    def send(self, channel: Channel, delivery: Delivery) -> None:
        """One attempt at ``delivery`` through ``channel``; raises when it did not get through."""
        raise NotImplementedError


def url_target(target: str) -> str:
    """A target that must be an http(s) URL (webhooks, Slack's incoming webhooks)."""
    if not target.startswith(("http://", "https://")):
        raise NotifyError("a webhook's target is an http(s) URL")
    return target


def times(delivery: Delivery) -> str:
    """`` (N times)`` for a storm grouped into one message, else nothing."""
    return f" ({delivery.count} times)" if delivery.count > 1 else ""


def headline(delivery: Delivery) -> str:
    """The one line a chat message or a mail's first line says: ``[event] subject``."""
    return f"[{delivery.event}] {delivery.subject}{times(delivery)}"


def title(delivery: Delivery) -> str:
    """A mail's subject, a notification's title."""
    return f"Dead Letter Office: {delivery.subject}{times(delivery)}"[:250]


def post(url: str, payload: bytes, headers: dict[str, str]) -> None:
    """POST ``payload``; a status over 299 is a TransportError (tried again)."""
    response = httpx.post(url, content=payload, headers=headers, timeout=TIMEOUT)
    if response.status_code >= 300:
        raise TransportError(f"the receiver answered {response.status_code}")
