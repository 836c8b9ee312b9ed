"""Webhook: a JSON POST of the delivery's body (with ``"delivery": <id>``), signed.

- Target: an http(s) URL; its credentials (userinfo, query values) are shown as ``***``.
- Secret: signs each message: ``X-DLO-Signature: sha256=<hex>`` is the HMAC-SHA256 of the exact
  bytes sent, under the channel's secret; ``X-DLO-Event`` names the event.
- A status over 299 is a failure, tried again.
"""

from __future__ import annotations

import hashlib
import hmac
import json

from console.models import Channel, Delivery
from console.notifications.kinds.base import ChannelKind, post, url_target


class Webhook(ChannelKind):
    name = "webhook"

    def parse(self, target: str) -> tuple[str, str | None]:
        return url_target(target), None

    def send(self, channel: Channel, delivery: Delivery) -> None:
        payload = json.dumps({**delivery.body, "delivery": delivery.pk}, ensure_ascii=False, sort_keys=True).encode()
        signature = hmac.new(channel.secret.encode(), payload, hashlib.sha256).hexdigest()
        post(channel.delivery_target, payload, {"Content-Type": "application/json", "X-DLO-Event": delivery.event,
                                                "X-DLO-Signature": f"sha256={signature}"})
