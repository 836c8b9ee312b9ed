from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "console"
    verbose_name = "Dead Letter Office"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        import console.celery  # noqa: F401 - the Celery app every task and send_task uses
        from console.access.signals import connect
        from console.jobs import kinds
        from console.jobs.tasks import connect as connect_the_worker
        from console.models import Channel, Job
        from console.notifications.registry import kind_choices
        from console.security import checks  # noqa: F401 - registers the identity provider's checks
        from console.services.body_schemas import connect as connect_the_body_schemas

        connect(self)
        connect_the_body_schemas()  # the formats read with uploaded schemas (Protobuf, Avro) get them
        connect_the_worker()  # the door's one enqueue sends jobs to run_job (console.jobs.door.queueing)
        # Job.kind takes its choices from the kind registry, which the models cannot import (a
        # layer above them); a callable, so a new kind needs no migration.
        Job._meta.get_field("kind").choices = kinds.choices  # type: ignore[assignment]  # Django 5 takes a callable
        Channel._meta.get_field("kind").choices = kind_choices  # type: ignore[assignment]  # as Job.kind's
