"""Sending what console.services.notify queued: one delivery, one attempt at a time, by the
Celery task ``console.deliver`` (console.jobs.tasks), which tries again with a growing pause
(DLO_NOTIFY_RETRY_SECONDS, doubled each time) until DLO_NOTIFY_ATTEMPTS attempts failed. Every
attempt is written on the delivery (when, and what went wrong), which the delivery log shows.

- **webhook**: a JSON POST of the delivery's body, signed: ``X-DLO-Signature: sha256=<hex>``,
  the HMAC-SHA256 of the exact bytes sent under the channel's secret; ``X-DLO-Event`` names it.
- **slack**: a POST of ``{"text": ...}`` as Slack's incoming webhooks (and Mattermost's, and
  Rocket.Chat's) take it.
- **email**: Django's e-mail backend (EMAIL_HOST, EMAIL_PORT, ... from the environment).
- **apprise**: whatever service the channel's Apprise URL names (kept as its secret).
"""

from __future__ import annotations

import hashlib
import hmac
import json

import httpx
from django.conf import settings
from django.core.mail import send_mail
from django.utils import timezone

from console.models import Channel, Delivery

TIMEOUT = 10.0


class Failed(Exception):
    """This attempt failed; the task tries again after ``countdown`` seconds."""

    def __init__(self, message: str, countdown: float) -> None:
        super().__init__(message)
        self.countdown = countdown


def deliver(delivery_id: int) -> str:
    """Make one attempt at a delivery; its new status (Failed when it will be tried again)."""
    delivery = Delivery.objects.select_related("channel").filter(pk=delivery_id).first()
    if delivery is None or delivery.status != Delivery.Status.PENDING:
        return "nothing to send"
    try:
        send(delivery.channel, delivery)
    except Exception as exc:  # noqa: BLE001 - whatever the receiver did, it is written down
        # The delivery log is read by admins: an error naming the whole target would show its credentials.
        why = f"{type(exc).__name__}: {exc}".replace(delivery.channel.delivery_target, delivery.channel.target)
        return _failed(delivery, why[:500])
    delivery.attempts = [*delivery.attempts, {"at": timezone.now().isoformat(), "outcome": "sent"}]
    delivery.status, delivery.sent_at, delivery.last_error = Delivery.Status.SENT, timezone.now(), ""
    delivery.save(update_fields=["attempts", "status", "sent_at", "last_error"])
    return Delivery.Status.SENT


def _failed(delivery: Delivery, why: str) -> str:
    delivery.attempts = [*delivery.attempts, {"at": timezone.now().isoformat(), "outcome": "failed", "error": why}]
    delivery.last_error = why
    tries = len(delivery.attempts)
    if tries >= settings.DLO_NOTIFY_ATTEMPTS:
        delivery.status = Delivery.Status.FAILED
        delivery.save(update_fields=["attempts", "last_error", "status"])
        return Delivery.Status.FAILED
    delivery.save(update_fields=["attempts", "last_error"])
    raise Failed(why, settings.DLO_NOTIFY_RETRY_SECONDS * 2 ** (tries - 1))


def send(channel: Channel, delivery: Delivery) -> None:
    """One attempt; raises on any failure (a refused connection, a status over 299, SMTP's)."""
    body = delivery.body
    count = f" ({delivery.count} times)" if delivery.count > 1 else ""
    line = f"[{delivery.event}] {delivery.subject}{count}"
    if channel.kind == Channel.Kind.EMAIL:
        text = "\n".join([line, "", body.get("about", ""), f"Place: {body.get('place') or '-'}",
                          json.dumps(body.get("details", {}), indent=2, ensure_ascii=False)])
        send_mail(f"Dead Letter Office: {delivery.subject}{count}"[:250], text, settings.DEFAULT_FROM_EMAIL,
                  [channel.delivery_target])
        return
    if channel.kind == Channel.Kind.APPRISE:
        import apprise  # noqa: PLC0415 - loads its plugins; only channels of this kind need it

        sender = apprise.Apprise()
        sender.add(channel.secret)
        text = f"{body.get('about', '')}. Place: {body.get('place') or '-'}"
        if not sender.notify(title=f"Dead Letter Office: {delivery.subject}{count}"[:250], body=text):
            raise RuntimeError("Apprise could not deliver it (its log says why)")
        return
    if channel.kind == Channel.Kind.SLACK:
        payload = json.dumps({"text": line}).encode()
        headers = {"Content-Type": "application/json"}
    else:
        payload = json.dumps({**body, "delivery": delivery.pk}, ensure_ascii=False, sort_keys=True).encode()
        signature = hmac.new(channel.secret.encode(), payload, hashlib.sha256).hexdigest()
        headers = {"Content-Type": "application/json", "X-DLO-Event": delivery.event,
                   "X-DLO-Signature": f"sha256={signature}"}
    response = httpx.post(channel.delivery_target, content=payload, headers=headers, timeout=TIMEOUT)
    if response.status_code >= 300:
        raise RuntimeError(f"the receiver answered {response.status_code}")
