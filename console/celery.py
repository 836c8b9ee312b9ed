"""The Celery app: ``celery -A console worker``."""

from __future__ import annotations

import os

from celery import Celery
from celery.signals import worker_init

from console.malloc import give_back_large_blocks

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")

app = Celery("console")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["console.jobs", "console.pipeline"])


@worker_init.connect
def _give_back_large_blocks(**_) -> None:
    """Before the pool starts, so that its processes inherit it (console.malloc)."""
    give_back_large_blocks()
