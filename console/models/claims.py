"""Signing in through the company's identity provider (OpenID Connect): who a provider's subject
is here, and what each value of its groups claim gives (console.access.claims applies it)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from console.models.access import LimitRow

#: The roles of console.access.roles (models sit below access, so named again here).
ROLE_CHOICES = [("viewer", "viewer"), ("operator", "operator"), ("admin", "admin")]


class ClaimMapping(models.Model):
    """One value of the provider's groups (or roles) claim, and the role and limits it gives.

    Without limit rows the role is unlimited; with some, limited to those brokers and places.
    Limits fail closed as RoleScope's do: removing the broker or place empties the row (it then
    allows nothing) instead of deleting it, which would leave the mapping unlimited."""

    group = models.CharField(max_length=255, unique=True,
                             help_text="The claim's value, exactly as the provider sends it")
    role = models.CharField(max_length=20, choices=ROLE_CHOICES)
    #: Rights of the role it withholds (console.access.roles.WITHHOLDABLE: "export_letters").
    withhold = models.JSONField(default=list, blank=True)
    note = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["group"]

    def __str__(self) -> str:
        return f"{self.group} -> {self.role}"


class ClaimMappingLimit(LimitRow):
    """One broker or place a mapping's role is limited to (fail closed, as LimitRow says)."""

    mapping = models.ForeignKey(ClaimMapping, on_delete=models.CASCADE, related_name="limits")


class ExternalIdentity(models.Model):
    """The console user a provider's subject signs in as, and where their role last came from.

    ``(issuer, subject)`` is the identity (OpenID Connect Core 1.0, 5.7: never the e-mail or the
    name, which the provider may reassign). ``groups`` and ``mappings`` are what decided the
    role and limits when they were last applied, shown on the roles page and in the API."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="external_identity")
    issuer = models.CharField(max_length=500)
    subject = models.CharField(max_length=255)
    role = models.CharField(max_length=20, blank=True)
    groups = models.JSONField(default=list, blank=True, help_text="The claim values that decided the role")
    mappings = models.JSONField(default=list, blank=True, help_text="The mappings that gave it")
    via = models.CharField(max_length=20, blank=True, help_text="sign-in or token")
    applied_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["issuer", "subject"], name="external_identity_unique")]

    def __str__(self) -> str:
        return f"{self.subject} at {self.issuer}"


class ProviderSession(models.Model):
    """A console session begun through the provider, with the provider's subject and session id
    (``sid``), so that the provider's back-channel logout ends it (console.security.logout). It
    goes with its session: a sign-out, an expiry swept by ``clearsessions``."""

    session = models.OneToOneField("sessions.Session", primary_key=True, on_delete=models.CASCADE,
                                   related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    issuer = models.CharField(max_length=500)
    subject = models.CharField(max_length=255)
    sid = models.CharField(max_length=255, blank=True)
    signed_in_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["issuer", "subject"], name="provider_session_subject"),
                   models.Index(fields=["issuer", "sid"], name="provider_session_sid")]

    def __str__(self) -> str:
        return f"{self.subject} at {self.issuer}"
