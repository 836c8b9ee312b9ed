"""The door and the job's lifecycle: a job is requested (requests), held for a second person
(approvals), queued for the worker (queueing), steered while it runs (steering) and run by the
worker (runner). Every path, a page, the API, a command, a rule or the schedules, comes in here."""
