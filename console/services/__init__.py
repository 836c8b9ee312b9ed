"""Every change goes through a ``do_*`` function here: atomic, ``actor=`` keyword, audit row in
the same transaction, Celery work queued on commit. Views, the API, jobs and management
commands all call these, so nothing skips the audit."""
