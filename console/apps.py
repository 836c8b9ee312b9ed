from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "console"
    verbose_name = "Dead Letter Office"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        import console.celery  # noqa: F401 - the Celery app every task and send_task uses
        from console.access.signals import connect
        from console.jobs.tasks import connect as connect_the_worker

        connect(self)
        connect_the_worker()  # the door's one enqueue sends jobs to run_job (console.jobs.door.queueing)
