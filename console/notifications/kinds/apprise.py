"""Apprise: whatever service an Apprise URL names (Teams, Telegram, ntfy, Discord, ...).

- Target: an Apprise URL. Its tokens make the whole URL a secret: it is kept as the channel's
  secret, and the target shows only its scheme (``json://…``).
- Title and text: the subject, what the event means and the place.
- Apprise's plugins load when a channel of this kind is first checked or sent to (the registry
  imports this module on first use), not at start-up.
- Apprise answering that it could not deliver is a failure, tried again (its log says why).
"""

from __future__ import annotations

import apprise

from console.models import Channel, Delivery
from console.notifications.kinds.base import ChannelKind, NotifyError, TransportError, title


class Apprise(ChannelKind):
    name = "apprise"

    def parse(self, target: str) -> tuple[str, str | None]:
        if not apprise.Apprise().add(target):
            raise NotifyError("Apprise does not understand this URL (see its list of services)")
        return f"{target.split('://', 1)[0]}://…", target

    def send(self, channel: Channel, delivery: Delivery) -> None:
        sender = apprise.Apprise()
        sender.add(channel.secret)
        body = delivery.body
        if not sender.notify(title=title(delivery), body=f"{body.get('about', '')}. Place: {body.get('place') or '-'}"):
            raise TransportError("Apprise could not deliver it (its log says why)")
