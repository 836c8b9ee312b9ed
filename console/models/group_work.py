from __future__ import annotations

from django.conf import settings
from django.db import models


class GroupTriage(models.Model):
    """What people decided about a failure group, kept by its fingerprint (so it stays with the
    group as letters come and go): a status, an owner, tags. Notes are GroupNote rows; every
    change is in the audit (the group's timeline)."""

    class Status(models.TextChoices):
        NEW = "new"
        INVESTIGATING = "investigating"
        FIXED = "fixed", "fixed - awaiting replay"
        RESOLVED = "resolved"
        IGNORED = "ignored"

    fingerprint = models.CharField(max_length=32, unique=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.NEW)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    tags = models.JSONField(default=list, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["status"], name="group_triage_status")]


class GroupNote(models.Model):
    """A person's note on a failure group: plain text, shown escaped."""

    group = models.ForeignKey(GroupTriage, on_delete=models.CASCADE, related_name="notes")
    author = models.CharField(max_length=150)
    text = models.TextField()
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["at", "id"]
