"""Delivery: the Delivery rows an event makes, and sending them.

- **Queueing.** :func:`queue` writes one Delivery for a channel inside the caller's transaction,
  and hands it to Celery after the commit (a rolled-back event sends nothing). An event with the
  same key (``group.new`` of one fingerprint, ``place.depth`` of one place) that happens again
  while its message still waits (DLO_NOTIFY_GROUP_SECONDS) adds to that message's ``count``, so
  10,000 letters make one message, not 10,000.
- **Sending.** The Celery task ``console.deliver`` (console.jobs.tasks) calls :func:`deliver`:
  one attempt, through the channel's kind (console.notifications.registry). A failed attempt is
  tried again with a growing pause (DLO_NOTIFY_RETRY_SECONDS, doubled each time) until
  DLO_NOTIFY_ATTEMPTS attempts failed, or at once given up when the kind says trying again
  cannot help (a permanent TransportError).
- **The log.** Every attempt is written on the delivery (when, and what went wrong), which the
  delivery log shows to admins; an error naming the whole target shows its shown form.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from console.models import Channel, DeadPlace, Delivery
from console.notifications.kinds.base import TransportError
from console.notifications.registry import kind_of

#: The Celery task that sends a delivery (console.jobs.tasks), named: this layer does not import jobs.
DELIVER_TASK = "console.deliver"


class Failed(Exception):
    """This attempt failed; the task tries again after ``countdown`` seconds."""

    def __init__(self, message: str, countdown: float) -> None:
        super().__init__(message)
        self.countdown = countdown


def queue(channel: Channel, event: str, key: str, place: DeadPlace | None, body: dict[str, Any]) -> Delivery:
    """The waiting delivery of ``key`` to ``channel``, counted once more, or a new one sent after
    DLO_NOTIFY_GROUP_SECONDS."""
    now = timezone.now()
    waiting = (Delivery.objects.select_for_update()
               .filter(channel=channel, key=key, status=Delivery.Status.PENDING, send_after__gt=now).first())
    if waiting is not None:
        waiting.count += 1
        waiting.body = {**waiting.body, "count": waiting.count, "latest": body}
        waiting.save(update_fields=["count", "body"])
        return waiting
    delay = settings.DLO_NOTIFY_GROUP_SECONDS
    delivery = Delivery.objects.create(channel=channel, event=event, key=key[:300], place=place,
                                       subject=body["subject"][:300], body={**body, "count": 1},
                                       send_after=now + timedelta(seconds=delay))
    send_after_commit(delivery, countdown=delay)
    return delivery


def send_after_commit(delivery: Delivery, countdown: float | None = None) -> None:
    """Hand ``delivery`` to the Celery task once the caller's transaction commits."""
    transaction.on_commit(lambda: current_app.send_task(DELIVER_TASK, args=(delivery.pk,), countdown=countdown))


def deliver(delivery_id: int) -> str:
    """Make one attempt at a delivery; its new status (Failed when it will be tried again)."""
    delivery = Delivery.objects.select_related("channel").filter(pk=delivery_id).first()
    if delivery is None or delivery.status != Delivery.Status.PENDING:
        return "nothing to send"
    channel = delivery.channel
    try:
        kind_of(channel.kind).send(channel, delivery)
    except Exception as exc:  # noqa: BLE001 - whatever the receiver did, it is written down
        # The delivery log is read by admins: an error naming the whole target would show its credentials.
        why = _told(exc).replace(channel.delivery_target, channel.target)
        return _failed(delivery, why[:500], permanent=isinstance(exc, TransportError) and exc.permanent)
    delivery.attempts = [*delivery.attempts, {"at": timezone.now().isoformat(), "outcome": "sent"}]
    delivery.status, delivery.sent_at, delivery.last_error = Delivery.Status.SENT, timezone.now(), ""
    delivery.save(update_fields=["attempts", "status", "sent_at", "last_error"])
    return Delivery.Status.SENT


def _told(exc: Exception) -> str:
    """What the log says of a failed attempt: ``<error>: <message>``. A kind's own
    TransportError is told as the RuntimeError it was before kinds had one, so the log's lines
    read as they always did."""
    name = "RuntimeError" if isinstance(exc, TransportError) else type(exc).__name__
    return f"{name}: {exc}"


def _failed(delivery: Delivery, why: str, *, permanent: bool) -> str:
    delivery.attempts = [*delivery.attempts, {"at": timezone.now().isoformat(), "outcome": "failed", "error": why}]
    delivery.last_error = why
    tries = len(delivery.attempts)
    if permanent or tries >= settings.DLO_NOTIFY_ATTEMPTS:
        delivery.status = Delivery.Status.FAILED
        delivery.save(update_fields=["attempts", "last_error", "status"])
        return Delivery.Status.FAILED
    delivery.save(update_fields=["attempts", "last_error"])
    raise Failed(why, settings.DLO_NOTIFY_RETRY_SECONDS * 2 ** (tries - 1))
