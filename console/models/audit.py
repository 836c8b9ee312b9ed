from __future__ import annotations

import hashlib
import json

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models


class AuditEvent(models.Model):
    """Append-only, hash-chained record of every change: who, what, why, where, which letters.

    Each row's ``hash`` covers its own content and the previous row's hash, so changing or
    removing any row breaks the chain from there on (``manage.py verify_audit``). A database
    trigger refuses UPDATE and DELETE. Rows are written by ``console.services.audit.record``
    in the same transaction as the change they describe.
    """

    at = models.DateTimeField(db_index=True)
    actor_name = models.CharField(max_length=150, db_index=True)
    action = models.CharField(max_length=50, db_index=True)
    reason = models.TextField(blank=True)
    ticket = models.CharField(max_length=200, blank=True)
    job_id = models.BigIntegerField(null=True, blank=True, db_index=True)
    broker_name = models.CharField(max_length=100, blank=True)
    place_name = models.CharField(max_length=500, blank=True, db_index=True)
    target = models.CharField(max_length=500, blank=True)
    letter_ids = ArrayField(models.BigIntegerField(), default=list, blank=True)
    count = models.BigIntegerField(default=0)
    outcome = models.CharField(max_length=30, blank=True)
    details = models.JSONField(default=dict, blank=True)
    source_ip = models.GenericIPAddressField(null=True, blank=True)
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64, unique=True)

    class Meta:
        ordering = ["-id"]
        indexes = [GinIndex(fields=["letter_ids"], name="audit_letter_ids")]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.actor_name} {self.action}"

    def content(self) -> dict:
        """The fields the hash covers, in a fixed form."""
        return {
            "at": self.at.isoformat(),
            "actor": self.actor_name,
            "action": self.action,
            "reason": self.reason,
            "ticket": self.ticket,
            "job": self.job_id,
            "broker": self.broker_name,
            "place": self.place_name,
            "target": self.target,
            "letters": list(self.letter_ids),
            "count": self.count,
            "outcome": self.outcome,
            "details": self.details,
            "ip": self.source_ip,
        }

    def compute_hash(self) -> str:
        canonical = json.dumps(self.content(), sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256((self.prev_hash + canonical).encode()).hexdigest()


class AuditEventPlace(models.Model):
    """One broker or dead place an audit event concerns, by id: what scoped reads go by.

    The event's ``broker_name`` and ``place_name`` are for people, and a name can be given
    again to another broker or place; ids are never reused. These rows sit beside the event,
    not in it, so the hash chain (``AuditEvent.content``) and the append-only event rows are
    as they were, and existing events got theirs by inserts alone (migration 0018).

    ``place_id`` None: the event concerns the broker as a whole (added, changed, discovered,
    retention by origin). An event with no row concerns no broker or place (role grants,
    redaction rules, tokens): only users without limits see it. Plain ids, not foreign keys:
    removing a broker or place must not remove what the audit says about it. Append-only, like
    the events. The event link has no database constraint: PostgreSQL's foreign key triggers on
    the audit table would queue work on every change to it and so refuse an ALTER TABLE there
    in the same transaction (switching its guard triggers off, as verify_audit's tests do);
    record() writes these rows with their event.
    """

    event = models.ForeignKey(AuditEvent, on_delete=models.DO_NOTHING, related_name="places", db_constraint=False)
    broker_id = models.BigIntegerField()
    place_id = models.BigIntegerField(null=True, blank=True)

    def __str__(self) -> str:
        return f"event {self.event_id}: broker {self.broker_id} place {self.place_id or 'all'}"
