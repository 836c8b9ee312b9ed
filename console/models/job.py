from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class Job(models.Model):
    """A bulk action, run by Celery. This row is the truth for its progress.

    The set of letters is frozen when the job is made: either explicit ids, or a filter with
    the highest letter id that existed at preview time (``selection``). ``cursor`` is the last
    letter id handled, so a job killed mid-way resumes where it stopped.
    """

    class Kind(models.TextChoices):
        CAPTURE = "capture"
        REPLAY = "replay"
        MOVE = "move"
        PURGE = "purge"
        MARK_FAILED = "mark_failed"
        ARCHIVE_REPLAY = "archive_replay"  # republish letters from the lake (console.pipeline.replay)
        SHOVEL = "shovel"  # a whole dead place moved by the broker itself (RabbitMQ's shovel)

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        WAITING = "waiting"  # the broker is unreachable; the job retries
        PAUSED = "paused"
        CANCELLED = "cancelled"
        SUCCEEDED = "succeeded"
        FAILED = "failed"
        AWAITING_APPROVAL = "awaiting_approval"  # a second person must approve it before it runs
        EXPIRED = "expired"  # nobody approved it in time (console.services.approvals)

    FINISHED = (Status.CANCELLED, Status.SUCCEEDED, Status.FAILED, Status.EXPIRED)

    kind = models.CharField(max_length=20, choices=Kind.choices)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    actor_name = models.CharField(max_length=150)
    reason = models.TextField()
    ticket = models.CharField(max_length=200, blank=True)

    place = models.ForeignKey("console.DeadPlace", null=True, blank=True, on_delete=models.SET_NULL)
    target = models.CharField(max_length=500, blank=True, help_text="Destination queue of a move")
    selection = models.JSONField(default=dict, blank=True)
    expected = models.BigIntegerField(default=0, help_text="How many letters the preview showed")
    rate_limit = models.PositiveIntegerField(null=True, blank=True, help_text="Letters per second")
    concurrency = models.PositiveSmallIntegerField(default=1, help_text="Publishing channels working at once")

    # Canary replay (console.jobs.returns): replay the first ``canary_size`` letters, wait
    # ``canary_wait_seconds`` while watching the dead places for letters that come back, and go
    # on only while the share that came back stays at or under ``return_threshold`` percent.
    canary_size = models.PositiveIntegerField(null=True, blank=True, help_text="Letters replayed first")
    canary_wait_seconds = models.PositiveIntegerField(default=30, help_text="Seconds to wait after the canary")
    return_threshold = models.FloatField(null=True, blank=True,
                                         help_text="Percent of replayed letters coming back that pauses the job")
    watch = models.JSONField(default=dict, blank=True, help_text="State of the return watch (canary passed, "
                             "counts when it last started)")
    pause_reason = models.TextField(blank=True, help_text="Why the job paused itself")

    total = models.BigIntegerField(default=0)
    done = models.BigIntegerField(default=0)
    failed = models.BigIntegerField(default=0)
    skipped = models.BigIntegerField(default=0)
    returned = models.BigIntegerField(default=0, help_text="Replayed letters that died again")
    cursor = models.BigIntegerField(default=0)
    cancel_requested = models.BooleanField(default=False)
    pause_requested = models.BooleanField(default=False)
    log = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True)

    # Two-person rule (console.services.approvals): set when the job was made to wait.
    approval_requested = models.BooleanField(default=False)
    expires_at = models.DateTimeField(null=True, blank=True, help_text="Unapproved, it expires then")
    approved_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="approved_jobs")
    approved_at = models.DateTimeField(null=True, blank=True)
    refused_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="refused_jobs")
    refused_at = models.DateTimeField(null=True, blank=True)

    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"job {self.pk} {self.kind} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED

    @property
    def is_awaiting_approval(self) -> bool:
        return self.status == self.Status.AWAITING_APPROVAL

    @property
    def percent(self) -> int:
        if not self.total:
            return 100 if self.is_finished else 0
        return min(100, int(100 * (self.done + self.failed + self.skipped) / self.total))

    def add_log(self, message: str) -> None:
        """Append a line to the log (saved by the caller)."""
        self.log = [*self.log[-199:], {"at": timezone.now().isoformat(), "message": message}]
