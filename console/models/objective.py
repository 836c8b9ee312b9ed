from __future__ import annotations

from django.conf import settings
from django.db import models


class Objective(models.Model):
    """A promise on how long letters wait (issue 51), on a dead place, an origin or a saved view
(judged over all of the view's letters, so shown only to readers without limits):

    - ``oldest``: no held letter waits longer than ``seconds``;
    - ``resolved``: ``percent`` of the letters are resolved (replayed, moved, marked failed or
      purged) within ``seconds`` of their capture, over the last 7 and 30 days.

    Its ``state`` (met, at risk past 80% of the time, breached) and the figures it was judged on
    are kept by the last evaluation (console.services.objectives), ``state_since`` when it
    became so; every change of state is told once and audited."""

    class Kind(models.TextChoices):
        OLDEST = "oldest", "no letter waits longer than"
        RESOLVED = "resolved", "letters resolved within"

    class State(models.TextChoices):
        MET = "met", "met"
        AT_RISK = "at_risk", "at risk"
        BREACHED = "breached", "breached"

    name = models.CharField(max_length=100)
    place = models.ForeignKey("console.DeadPlace", null=True, blank=True, on_delete=models.CASCADE,
                              related_name="objectives")
    origin = models.ForeignKey("console.Origin", null=True, blank=True, on_delete=models.CASCADE,
                               related_name="objectives")
    view = models.ForeignKey("console.SavedView", null=True, blank=True, on_delete=models.CASCADE,
                             related_name="objectives")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    seconds = models.IntegerField(help_text="D: how long a letter may wait")
    percent = models.FloatField(null=True, blank=True, help_text="P, for resolved: the share resolved within D")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+", help_text="Who answers for it (named in its alerts)")
    state = models.CharField(max_length=10, choices=State.choices, default=State.MET)
    state_since = models.DateTimeField(null=True, blank=True)
    evaluated_at = models.DateTimeField(null=True, blank=True)
    oldest_age_seconds = models.FloatField(null=True, blank=True, help_text="The oldest held letter's age, or null")
    attainment_7d = models.FloatField(null=True, blank=True)
    attainment_30d = models.FloatField(null=True, blank=True)
    attainment_at = models.DateTimeField(null=True, blank=True, help_text="When the attainments were counted")
    created_by = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [models.CheckConstraint(
            condition=models.Q(place__isnull=False, origin__isnull=True, view__isnull=True)
            | models.Q(place__isnull=True, origin__isnull=False, view__isnull=True)
            | models.Q(place__isnull=True, origin__isnull=True, view__isnull=False),
            name="objective_one_target")]

    def __str__(self) -> str:
        return self.name

    @property
    def percent_7d(self) -> float | None:
        """The 7 days' share in percent, as the pages show it."""
        return None if self.attainment_7d is None else round(self.attainment_7d * 100, 1)

    @property
    def percent_30d(self) -> float | None:
        return None if self.attainment_30d is None else round(self.attainment_30d * 100, 1)
