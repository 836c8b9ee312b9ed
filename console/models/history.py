"""What the pipeline writes back to PostgreSQL: failure groups over the whole history, their
daily counts, and how far each lake dataset has been archived."""

from __future__ import annotations

from django.db import models


class FailureGroupHistory(models.Model):
    """One failure fingerprint over the whole history (lake + custody not yet archived).

    Recomputed as a whole by ``manage.py pipeline groups``; ``computed_at`` says when.
    """

    fingerprint = models.CharField(max_length=32, unique=True)
    exception_type = models.CharField(max_length=500, blank=True)
    reason = models.CharField(max_length=50, blank=True)
    sample_message = models.TextField(blank=True, help_text="Exception message of the group's first letter")
    count = models.BigIntegerField(default=0)
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    origins = models.JSONField(default=list, blank=True, help_text="Origin subscriptions, sorted")
    brokers = models.JSONField(default=list, blank=True)
    consumers = models.JSONField(default=list, blank=True, help_text="Consumers named by framework headers")
    hosts = models.JSONField(default=list, blank=True, help_text="Servers named by framework headers")
    computed_at = models.DateTimeField()

    class Meta:
        ordering = ["-count", "fingerprint"]
        verbose_name_plural = "failure group histories"

    def __str__(self) -> str:
        return f"group {self.fingerprint} ({self.count})"


class FailureGroupDay(models.Model):
    """How many letters of one group failed on one day (UTC), for the trend chart."""

    group = models.ForeignKey(FailureGroupHistory, on_delete=models.CASCADE, related_name="days")
    day = models.DateField()
    count = models.BigIntegerField()

    class Meta:
        ordering = ["group", "day"]
        constraints = [models.UniqueConstraint(fields=["group", "day"], name="group_day_unique")]


class LakeWatermark(models.Model):
    """The highest row id of one table exported to one lake (``archive`` starts after it)."""

    lake = models.CharField(max_length=1000)
    dataset = models.CharField(max_length=50)
    last_id = models.BigIntegerField(default=0)
    rows = models.BigIntegerField(default=0, help_text="Rows written to the lake so far")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["lake", "dataset"], name="watermark_unique")]

    def __str__(self) -> str:
        return f"{self.lake} {self.dataset} <= {self.last_id}"
