"""Slack: a POST of ``{"text": "[event] subject"}``, as the incoming webhooks of Slack (and of
Mattermost and Rocket.Chat) take it.

- Target: the incoming webhook's URL; its secret path (hooks.slack.com's, Mattermost's
  ``/hooks/...``) is shown as ``***``.
- A status over 299 is a failure, tried again.
"""

from __future__ import annotations

import json

from console.models import Channel, Delivery
from console.notifications.kinds.base import ChannelKind, headline, post, url_target


class Slack(ChannelKind):
    name = "slack"

    def parse(self, target: str) -> tuple[str, str | None]:
        return url_target(target), None

    def send(self, channel: Channel, delivery: Delivery) -> None:
        post(channel.delivery_target, json.dumps({"text": headline(delivery)}).encode(),
             {"Content-Type": "application/json"})
