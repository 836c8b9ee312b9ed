from __future__ import annotations

from django.conf import settings
from django.db import models

from console.channel_targets import split_target
from console.secrets import encrypted_secret


class Channel(models.Model):
    """Where notifications go: a webhook (JSON, signed with an HMAC of the secret), a
    Slack-compatible incoming webhook, an e-mail address (Django's e-mail backend), or an Apprise
    URL (whose tokens make it a secret: it is kept as the secret, and ``target`` shows only its
    scheme). Made by admins; the secret is kept encrypted like a broker's password.

    ``target`` is what may be shown, to admins and in the audit too: a URL's userinfo, query
    values and the path of known webhook hosts (Slack, Discord, Teams, Mattermost) are credentials,
    shown as ``***`` (console.channel_targets). The whole target is then kept encrypted in
    ``target_credentials_encrypted``, and only delivering reads it (``delivery_target``)."""

    name = models.CharField(max_length=100, unique=True)
    #: A kind of console.notifications.kinds. Its choices are the channel kind registry's
    #: (console.notifications.registry.kind_choices), bound when the app is ready: the registry
    #: is a layer above the models, and a new kind needs no migration.
    kind = models.CharField(max_length=20, choices=[])
    target = models.CharField(max_length=1000, help_text="URL, or e-mail address")
    target_credentials_encrypted = models.TextField(
        blank=True, help_text="The whole target, encrypted, when it carries credentials (else empty)")
    secret_encrypted = models.TextField(blank=True)
    enabled = models.BooleanField(default=True)
    created_by = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    secret = encrypted_secret("secret_encrypted")
    #: The whole target when it carries credentials, else "": set by ``set_target``, read by
    #: ``delivery_target`` alone (private, so no template can show it).
    _target_credentials = encrypted_secret("target_credentials_encrypted")

    def set_target(self, target: str) -> None:
        """Keep ``target``: its shown form in ``target``, the whole of it encrypted when it
        carries credentials."""
        self.target, hidden = split_target(target)
        self._target_credentials = target if hidden else ""

    @property
    def delivery_target(self) -> str:
        """The whole target, credentials included: for sending, never for showing."""
        return self._target_credentials or self.target

    @property
    def target_has_credentials(self) -> bool:
        return bool(self.target_credentials_encrypted)


class Subscription(models.Model):
    """Who hears of which events, through which channel: one user, or every member of a group
    of users (then only of what every one of them may see). ``place`` narrows it to one dead
    place; ``threshold`` is the depth for ``place.depth``."""

    channel = models.ForeignKey(Channel, on_delete=models.CASCADE, related_name="subscriptions")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE,
                             related_name="+")
    group = models.ForeignKey("auth.Group", null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    events = models.JSONField(default=list)
    place = models.ForeignKey("console.DeadPlace", null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    threshold = models.IntegerField(null=True, blank=True)
    #: A subscription to a saved view's new letters (event ``view.letters``,
    #: console.services.view_subscriptions): told at once, or every ``digest_minutes``.
    view = models.ForeignKey("console.SavedView", null=True, blank=True, on_delete=models.CASCADE,
                             related_name="subscriptions")
    digest_minutes = models.IntegerField(null=True, blank=True)
    created_by = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)


class ViewMatch(models.Model):
    """A new letter a view subscription matched (console.services.view_subscriptions): each letter
    is told once per subscription (``told_at``), at once or in the next digest."""

    subscription = models.ForeignKey(Subscription, on_delete=models.CASCADE, related_name="matches")
    letter_id = models.BigIntegerField()
    place = models.ForeignKey("console.DeadPlace", on_delete=models.CASCADE, related_name="+")
    matched_at = models.DateTimeField()
    told_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["subscription", "letter_id"], name="view_match_once")]
        indexes = [models.Index(fields=["subscription", "told_at"], name="view_match_untold")]


class Delivery(models.Model):
    """One message to one channel: an event, or a storm of the same event grouped into one
    (``count``). Sent by Celery with retries; every attempt is in ``attempts``."""

    class Status(models.TextChoices):
        PENDING = "pending"
        SENT = "sent"
        FAILED = "failed"

    channel = models.ForeignKey(Channel, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=50)
    key = models.CharField(max_length=300, help_text="What makes two events one message (event and subject)")
    place = models.ForeignKey("console.DeadPlace", null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    subject = models.CharField(max_length=300)
    body = models.JSONField(default=dict)
    count = models.IntegerField(default=1)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.JSONField(default=list)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    send_after = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["channel", "key", "status"], name="delivery_grouping")]
