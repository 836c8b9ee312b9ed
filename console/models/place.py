from __future__ import annotations

from django.db import models

from console.brokers import PlaceRef


class DeadPlace(models.Model):
    """A queue, subqueue, stream or consumer on a broker where dead letters sit."""

    #: The kind (and discovered_by) of a place holding letters imported from another console's
    #: export (console.services.letter_import): no queue of the broker, discovery leaves it be.
    IMPORTED = "imported"

    broker = models.ForeignKey("console.Broker", on_delete=models.CASCADE, related_name="places")
    name = models.CharField(max_length=500)
    scope = models.CharField(max_length=500, blank=True, help_text="vhost, stream or namespace")
    kind = models.CharField(max_length=30, default="queue")
    discovered_by = models.CharField(max_length=30, default="manual")
    origins = models.JSONField(default=list, blank=True)
    details = models.JSONField(default=dict, blank=True)

    depth = models.BigIntegerField(null=True, blank=True)
    oldest_at = models.DateTimeField(null=True, blank=True)
    consumers = models.IntegerField(null=True, blank=True)
    last_seen_at = models.DateTimeField(null=True, blank=True)
    gone = models.BooleanField(default=False, help_text="No longer found by discovery")
    keep_in_custody = models.BooleanField(
        default=False, help_text="Drained continuously by the keeper (console.jobs.keeper): letters are in custody "
                                 "seconds after they die")

    class Meta:
        ordering = ["broker__name", "scope", "name"]
        constraints = [
            models.UniqueConstraint(fields=["broker", "scope", "name"], name="place_unique_per_broker"),
        ]

    def __str__(self) -> str:
        # RabbitMQ's default vhost "/" goes unsaid: "broker://orders.dlq" read like a URL.
        scope = self.scope if self.scope not in ("", "/") else ""
        return f"{self.broker.name}:{scope + '/' if scope else ''}{self.name}"

    @property
    def ref(self) -> PlaceRef:
        return PlaceRef(self.name, self.scope)


class PlaceSample(models.Model):
    """Depth and custody counts of a place at one moment, for the charts."""

    place = models.ForeignKey(DeadPlace, on_delete=models.CASCADE, related_name="samples")
    at = models.DateTimeField(db_index=True)
    depth = models.BigIntegerField(null=True)
    held = models.BigIntegerField(default=0)
    arrivals = models.BigIntegerField(default=0, help_text="Letters captured since the previous sample")

    class Meta:
        ordering = ["place", "at"]
        indexes = [models.Index(fields=["place", "at"])]
