"""Failure analytics over the whole history, as the pipeline's ``analytics`` job last computed
them (console.pipeline.analytics): outcomes per failure group, per origin and over all, the
busiest origins, consumers and hosts, and arrivals by weekday and hour. Each run replaces them."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class OutcomeStat(models.Model):
    """What became of the letters of one failure group, one origin (broker and subscription),
    or all of them.

    Resolved: replayed (a replay, a replay from the archive or a move was confirmed) or marked
    failed, the first such audit event counting. Time to resolution: from the letter's first
    failure to it, in whole minutes; the median and 90th percentile interpolate between the
    nearest resolved letters (PostgreSQL's ``percentile_cont``). Came back: a replayed letter
    that died again (a later letter names it as its parent). A recurrence: a letter that arrived
    when every earlier letter of its group had been resolved.
    """

    class Kind(models.TextChoices):
        GROUP = "group", "failure group"
        ORIGIN = "origin", "origin"
        ALL = "all", "all letters"

    kind = models.CharField(max_length=10, choices=Kind.choices)
    fingerprint = models.CharField(max_length=32, blank=True)
    broker = models.CharField(max_length=200, blank=True)
    origin = models.CharField(max_length=500, blank=True)
    letters = models.BigIntegerField()
    resolved = models.BigIntegerField()
    replayed = models.BigIntegerField()
    failed = models.BigIntegerField()
    came_back = models.BigIntegerField()
    recurrences = models.BigIntegerField()
    median_minutes = models.FloatField(null=True)
    p90_minutes = models.FloatField(null=True)
    computed_at = models.DateTimeField()

    class Meta:
        ordering = ["kind", "-letters", "fingerprint", "broker", "origin"]
        indexes = [models.Index(fields=["kind", "-letters"], name="outcome_kind_letters")]

    @property
    def stayed_away(self) -> int:
        return self.replayed - self.came_back


class BusyName(models.Model):
    """One of the busiest origins, consumers or hosts: its letters and failure groups."""

    class Kind(models.TextChoices):
        ORIGIN = "origin", "origin"
        CONSUMER = "consumer", "consumer"
        HOST = "host", "host"

    kind = models.CharField(max_length=10, choices=Kind.choices)
    name = models.CharField(max_length=500)
    broker = models.CharField(max_length=200, blank=True, help_text="For an origin: its broker")
    letters = models.BigIntegerField()
    groups = models.BigIntegerField()
    computed_at = models.DateTimeField()

    class Meta:
        ordering = ["kind", "-letters", "name", "broker"]


class ArrivalCell(models.Model):
    """Letters that arrived on one weekday (1 Monday .. 7 Sunday) in one hour (0-23), UTC."""

    weekday = models.PositiveSmallIntegerField()
    hour = models.PositiveSmallIntegerField()
    letters = models.BigIntegerField()
    computed_at = models.DateTimeField()

    class Meta:
        ordering = ["weekday", "hour"]
        constraints = [models.UniqueConstraint(fields=["weekday", "hour"], name="arrival_cell_unique")]


class ObjectiveWeek(models.Model):
    """An objective's attainment in one week of the whole history (the analytics, from the lake
    and custody): of the letters captured that week (a week starts on Monday, UTC) in its place or
    from its origin whose outcome is known (resolved, or open longer than D by the computation),
    how many were resolved within D of their capture. Resolved is as the analytics have it: a
    confirmed replay or move, or marked failed, the first such event counting."""

    objective = models.ForeignKey("console.Objective", on_delete=models.CASCADE, related_name="weeks")
    week = models.DateField(help_text="The week's Monday (UTC)")
    known = models.BigIntegerField()
    in_time = models.BigIntegerField()
    computed_at = models.DateTimeField()

    class Meta:
        ordering = ["objective", "-week"]
        constraints = [models.UniqueConstraint(fields=["objective", "week"], name="objective_week_unique")]

    @property
    def percent(self) -> float | None:
        return round(100 * self.in_time / self.known, 1) if self.known else None


class AnalyticsRun(models.Model):
    """A computation of the analytics asked for (``manage.py demo --analytics-later`` queues one
    for the worker, so ``make run`` answers first) or under way (the pipeline's ``analytics``
    task): while one is open, the Analytics page says they are being computed and fills in by
    itself when they are (console.services.analytics)."""

    asked_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-asked_at"]
