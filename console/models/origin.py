from __future__ import annotations

from django.db import models


class Origin(models.Model):
    """A subscription queue letters died in (a letter's ``origin_queue`` on its broker, in its
    place's scope), with its breaker (seed 001): the streak of failures arriving from it, by
    exception type; once open, no rule replays to it until a person closes it."""

    broker = models.ForeignKey("console.Broker", on_delete=models.CASCADE, related_name="origins")
    scope = models.CharField(max_length=500, blank=True, help_text="vhost, stream or namespace")
    name = models.CharField(max_length=500)

    streak_exception = models.CharField(max_length=500, blank=True,
                                        help_text="The exception type of the latest letters in a row")
    streak_same = models.IntegerField(default=0, help_text="Letters in a row with streak_exception")
    streak_any = models.IntegerField(default=0, help_text="Letters in a row with any exception")
    last_arrival_at = models.DateTimeField(null=True, blank=True)

    breaker_opened_at = models.DateTimeField(null=True, blank=True)
    breaker_reason = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["broker__name", "scope", "name"]
        constraints = [
            models.UniqueConstraint(fields=["broker", "scope", "name"], name="origin_unique_per_broker"),
        ]

    def __str__(self) -> str:
        scope = self.scope if self.scope not in ("", "/") else ""
        return f"{self.broker.name}:{scope + '/' if scope else ''}{self.name}"

    @property
    def breaker_open(self) -> bool:
        return self.breaker_opened_at is not None
