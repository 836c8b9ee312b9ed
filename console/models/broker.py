from __future__ import annotations

from django.db import models

from console.brokers import Adapter, BrokerConfig, get_adapter
from console.brokers.registry import KINDS
from console.secrets import encrypted_secret


def broker_kinds() -> list[tuple[str, str]]:
    """The registry's kinds; a callable, so adding an adapter needs no migration."""
    return [(kind, kind) for kind in sorted(KINDS)]


class Broker(models.Model):
    """A named connection to one broker. The password is kept encrypted (console.secrets)."""

    name = models.SlugField(max_length=100, unique=True)
    kind = models.CharField(max_length=30, choices=broker_kinds)
    url = models.CharField(max_length=500, help_text="Connection URL without credentials")
    management_url = models.CharField(max_length=500, blank=True)
    username = models.CharField(max_length=200, blank=True)
    password_encrypted = models.TextField(blank=True)
    options = models.JSONField(default=dict, blank=True)
    keep_new_places = models.BooleanField(
        default=False, help_text="Places discovered from now on are kept in custody (DeadPlace.keep_in_custody)")

    reachable = models.BooleanField(null=True, blank=True)
    version = models.CharField(max_length=100, blank=True)
    last_checked_at = models.DateTimeField(null=True, blank=True)
    last_discovery_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    unreachable_since = models.DateTimeField(null=True, blank=True, help_text="Since when it has not answered")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    password = encrypted_secret("password_encrypted")

    @property
    def has_password(self) -> bool:
        return bool(self.password_encrypted)

    def config(self) -> BrokerConfig:
        return BrokerConfig(
            kind=self.kind,
            url=self.url,
            management_url=self.management_url,
            username=self.username,
            password=self.password,
            options=dict(self.options),
        )

    def adapter(self) -> Adapter:
        return get_adapter(self.config())
