"""Running jobs: the Celery tasks and the loops they drive (capture, publish, local)."""
