"""E-mail: a plain-text mail through Django's e-mail backend (EMAIL_HOST, EMAIL_PORT, ... from
the environment), from DEFAULT_FROM_EMAIL.

- Target: an address.
- The mail says the event and subject, what the event means, the place, and the details as JSON.
- SMTP's errors are failures, tried again.
"""

from __future__ import annotations

import json

from django.conf import settings
from django.core.mail import send_mail

from console.models import Channel, Delivery
from console.notifications.kinds.base import ChannelKind, NotifyError, headline, title


class Email(ChannelKind):
    name = "email"

    def parse(self, target: str) -> tuple[str, str | None]:
        if "@" not in target:
            raise NotifyError("an e-mail channel's target is an address")
        return target, None

    def send(self, channel: Channel, delivery: Delivery) -> None:
        body = delivery.body
        text = "\n".join([headline(delivery), "", body.get("about", ""), f"Place: {body.get('place') or '-'}",
                          json.dumps(body.get("details", {}), indent=2, ensure_ascii=False)])
        send_mail(title(delivery), text, settings.DEFAULT_FROM_EMAIL, [channel.delivery_target])
