"""Dead Letter Office: a web console for dead letters across brokers."""

from console.celery import app as celery_app

__all__ = ["celery_app"]
