from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class Job(models.Model):
    """A bulk action, run by Celery. This row is the truth for its progress.

    Every job is requested through one door (console.jobs.door.requests.request_job). Its kind is a
    module of console.jobs.kinds, which owns the kind's typed ``params`` (kept here as JSON),
    their validation and its runner. The set of letters is frozen when the job is made: either
    explicit ids, or a filter with the highest letter id that existed at preview time
    (``selection``). ``per_place`` counts what the job was asked to touch in each dead place
    (the approval rule sums it per requester). ``cursor`` is the last letter id handled, so a
    job killed mid-way resumes where it stopped.
    """

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        WAITING = "waiting"  # the broker is unreachable; the job retries
        PAUSED = "paused"
        CANCELLED = "cancelled"
        SUCCEEDED = "succeeded"  # every letter it was asked to act on
        PARTLY_FAILED = "partly_failed", "partly failed"  # some letters, not all (console.jobs.door.runner)
        FAILED = "failed"  # none, or it could not run
        AWAITING_APPROVAL = "awaiting_approval"  # a second person must approve it before it runs
        REFUSED = "refused"  # the second person refused it: it never ran (console.jobs.door.approvals)
        EXPIRED = "expired"  # nobody approved it in time (console.jobs.door.approvals)

    #: The statuses a job never leaves. Named here once; everything else uses these, and the
    #: triggers that watch for a job's end list them (migration 0045).
    FINISHED = (Status.CANCELLED, Status.SUCCEEDED, Status.PARTLY_FAILED, Status.FAILED, Status.REFUSED,
                Status.EXPIRED)
    #: A worker has it now (or had it, if its heartbeat is stale).
    IN_WORKER = (Status.RUNNING, Status.WAITING)
    #: It has not started, or it may go on: nobody runs it now.
    NOT_STARTED = (Status.QUEUED, Status.PAUSED, Status.AWAITING_APPROVAL)

    #: A kind of console.jobs.kinds. Its choices are the kind registry's (console.jobs.kinds.choices),
    #: a callable bound when the app is ready (console.apps): the registry sits in a layer above
    #: the models, and a new kind needs no migration.
    kind = models.CharField(max_length=20, choices=[])
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    actor_name = models.CharField(max_length=150)
    reason = models.TextField()
    ticket = models.CharField(max_length=200, blank=True)

    place = models.ForeignKey("console.DeadPlace", null=True, blank=True, on_delete=models.SET_NULL,
                              help_text="The one dead place the job acts on, when there is one")
    params = models.JSONField(default=dict, blank=True, help_text="The kind's parameters (console.jobs.kinds)")
    selection = models.JSONField(default=dict, blank=True)
    per_place = models.JSONField(default=dict, blank=True,
                                 help_text="Letters asked for per dead place id (null: not known)")
    expected = models.BigIntegerField(default=0, help_text="How many letters the preview showed")
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

    # Two-person rule (console.jobs.door.approvals): set when the job was made to wait.
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
