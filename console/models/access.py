"""Who may see what: the console's permissions, and optional scopes limiting a user to some
brokers or places (console.access)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class LimitRow(models.Model):
    """One broker or one place something is limited to: a user (RoleScope) or a mapping of the
    identity provider's groups (console.models.claims.ClaimMappingLimit).

    Limits fail closed: removing the broker or place a row names empties the row instead of
    deleting it (``SET_NULL``), so what it limits stays limited, now to nothing there, rather
    than becoming unlimited for want of rows. ``named`` keeps what the row was about."""

    broker = models.ForeignKey("console.Broker", null=True, blank=True, on_delete=models.SET_NULL,
                               related_name="+")
    place = models.ForeignKey("console.DeadPlace", null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    named = models.CharField(max_length=700, blank=True,
                             help_text="The broker or place as it was called when the limit was set")

    class Meta:
        abstract = True

    def save(self, *args, **kwargs) -> None:
        if not self.named and (self.place_id or self.broker_id):
            self.named = str(self.place or self.broker)
        super().save(*args, **kwargs)

    @property
    def label(self) -> str:
        """What the row limits to, or what it did before that broker or place was removed."""
        if self.place_id or self.broker_id:
            return str(self.place or self.broker)
        return f"{self.named or 'a broker or place'} (removed: allows nothing)"


class RoleScope(LimitRow):
    """One broker or one place a user is limited to.

    A user with no scope rows sees and acts on everything their role allows; with some, only
    on the brokers and places named (a place row allows that place on its own).

    Scopes fail closed: removing the broker or place a row names empties the row instead of
    deleting it (``SET_NULL``), so the user stays limited, now to nothing there, rather than
    becoming unlimited for want of rows. ``named`` keeps what the row was about, for the roles
    page and ``manage.py roles``. Only ``manage.py grant_role --clear-limits`` lifts the limits.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="scopes")

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
            ("export_letters", "Export letters, as the exporter may see them"),
            ("withhold_export_letters", "Export withheld from them (by a role mapping), whatever their role"),
        ]

    def __str__(self) -> str:
        return f"{self.user} limited to {self.label}"


class AgentGrant(models.Model):
    """What an API token lets an agent do through the MCP server (console.agents) beyond reading:
    ``act`` (the ``mcp:act`` scope) lets its acting tools ask for jobs. Set when the token is
    made, audited with it; a token without one may only read through MCP."""

    token = models.OneToOneField("authtoken.Token", primary_key=True, on_delete=models.CASCADE,
                                 related_name="agent_grant")
    act = models.BooleanField(default=False)
