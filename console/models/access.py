"""Who may see what: the console's permissions, and optional scopes limiting a user to some
brokers or places (console.access)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class RoleScope(models.Model):
    """One broker or one place a user is limited to.

    A user with no scope rows sees and acts on everything their role allows; with some, only
    on the brokers and places named (a place row allows that place on its own).
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="scopes")
    broker = models.ForeignKey("console.Broker", null=True, blank=True, on_delete=models.CASCADE,
                               related_name="+")
    place = models.ForeignKey("console.DeadPlace", null=True, blank=True, on_delete=models.CASCADE,
                              related_name="+")

    class Meta:
        # The role permissions live here, on the model about access; console.access.roles
        # groups them into the viewer, operator and admin roles.
        permissions = [
            ("view_console", "See brokers, places, letters, jobs and the audit"),
            ("act_on_letters", "Capture, replay, move, mark failed, edit and replay, steer jobs, discover"),
            ("see_unredacted", "See bodies and headers without the redaction rules"),
            ("purge_letters", "Purge letters"),
            ("manage_brokers", "Add, edit and test brokers"),
            ("manage_users", "Grant roles and scopes"),
            ("manage_redaction", "Change the redaction rules"),
        ]
        constraints = [
            models.CheckConstraint(condition=models.Q(broker__isnull=False) | models.Q(place__isnull=False),
                                   name="rolescope_names_broker_or_place"),
        ]

    def __str__(self) -> str:
        return f"{self.user} limited to {self.place or self.broker}"
