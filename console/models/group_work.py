from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
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
    ticket = models.URLField(max_length=500, blank=True, help_text="A link to the ticket the owner works in")
    resolved_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["status"], name="group_triage_status")]


class GroupNote(models.Model):
    """A person's note on a failure group: plain text, shown escaped.

    A group can span places, and a note may speak of any letter its author saw. ``places`` are
    the ids of the places of the group's letters its author could see when writing it; a reader
    sees the note only when they may see every one of them (console.access.scope). Plain ids,
    not foreign keys: removing a place must not make a note about it readable to more people.
    Empty (notes written before migration 0032 that no audit row explains): only users without
    limits read it."""

    group = models.ForeignKey(GroupTriage, on_delete=models.CASCADE, related_name="notes")
    author = models.CharField(max_length=150)
    text = models.TextField()
    at = models.DateTimeField(auto_now_add=True)
    places = ArrayField(models.BigIntegerField(), default=list, blank=True,
                        help_text="Ids of the places of the group's letters its author could see")

    class Meta:
        ordering = ["at", "id"]


class LetterMark(models.Model):
    """A letter marked "investigating" by a person (issue 51): who owns it now and the ticket
    they work in. One mark per letter; taking it away deletes the row (both audited)."""

    letter = models.OneToOneField("console.DeadLetter", on_delete=models.CASCADE, primary_key=True,
                                  related_name="mark")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    ticket = models.URLField(max_length=500, blank=True)
    marked_by = models.CharField(max_length=150)
    marked_at = models.DateTimeField(auto_now=True)
