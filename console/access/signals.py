"""What console.apps connects at start-up for access control."""

from __future__ import annotations

from django.db.models.signals import post_delete, post_init, post_migrate, post_save


def connect(app_config) -> None:
    """Keep the role groups after every migrate, keep the log mask's passwords current, and mask
    every log record from the first one."""
    from console.access import logsafe
    from console.models import Broker

    post_migrate.connect(_sync_roles_after_migrate, sender=app_config, dispatch_uid="dlo-sync-roles")
    post_init.connect(logsafe.remember_broker, sender=Broker, dispatch_uid="dlo-logsafe-init")
    post_save.connect(logsafe.remember_broker, sender=Broker, dispatch_uid="dlo-logsafe-save")
    post_save.connect(logsafe.forget_passwords, sender=Broker, dispatch_uid="dlo-logsafe-forget")
    post_delete.connect(logsafe.forget_passwords, sender=Broker, dispatch_uid="dlo-logsafe-delete")
    logsafe.install_record_factory()


def _sync_roles_after_migrate(using="default", **_kwargs) -> None:
    from console.access.roles import sync_roles

    sync_roles()
