from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "console"
    verbose_name = "Dead Letter Office"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        import console.celery  # noqa: F401 - the Celery app every task and send_task uses
        from console.access.signals import connect

        connect(self)
