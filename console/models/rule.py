from __future__ import annotations

from django.conf import settings
from django.db import models


class Rule(models.Model):
    """A handling rule (IBM's runmqdlq in a browser): ordered by ``position``, first match
    wins; scoped to every place, one broker or one place; ``match`` and ``action`` as the API
    takes them (console.services.rules checks them). Every edit makes a new version (RuleVersion)
    and the audit names the version that acted: ``rule:<name>@v<version>``. A deleted rule is
    kept (``deleted_at``) so those names stay meaningful."""

    name = models.CharField(max_length=100, unique=True)
    position = models.IntegerField(default=0)
    enabled = models.BooleanField(default=False)
    broker = models.ForeignKey("console.Broker", null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    place = models.ForeignKey("console.DeadPlace", null=True, blank=True, on_delete=models.CASCADE,
                              related_name="+")
    match = models.JSONField(default=dict, blank=True)
    action = models.JSONField(default=dict)
    version = models.IntegerField(default=1)
    # Who enabled it: the rule acts with that person's permissions and scope, narrowed to its own.
    enabled_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    enabled_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    deleted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["position", "id"]

    def __str__(self) -> str:
        return f"{self.name}@v{self.version}"


class RuleVersion(models.Model):
    """One version of a rule as it was saved: what an audit row's ``rule:<name>@v<n>`` names."""

    rule = models.ForeignKey(Rule, on_delete=models.CASCADE, related_name="versions")
    version = models.IntegerField()
    name = models.CharField(max_length=100)
    broker_id_scope = models.BigIntegerField(null=True, blank=True)
    place_id_scope = models.BigIntegerField(null=True, blank=True)
    match = models.JSONField(default=dict)
    action = models.JSONField(default=dict)
    made_by = models.CharField(max_length=150)
    made_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["rule", "version"]
        constraints = [models.UniqueConstraint(fields=["rule", "version"], name="rule_version_unique")]


class LetterHandling(models.Model):
    """What the rules did with a letter's lineage, beside the letter (capture never writes it):
    the rule and version that last acted, the tries its ladder made so far (a letter that comes
    back takes its parent's count on), when the next try is due, rules whose ladders ran out,
    and a note for the letter's page ("the ladder of rule 'x' v2 ran out after 15 tries")."""

    letter = models.OneToOneField("console.DeadLetter", primary_key=True, on_delete=models.CASCADE,
                                  related_name="handling")
    rule = models.ForeignKey(Rule, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    version = models.IntegerField(default=0)
    action = models.CharField(max_length=20, blank=True)
    tries = models.IntegerField(default=0)
    next_at = models.DateTimeField(null=True, blank=True)
    ran_out = models.JSONField(default=list, blank=True, help_text="Ids of the rules whose ladders ran out")
    held = models.BooleanField(default=False, help_text="A rule said: hold for a person (no rule acts on it again)")
    note = models.CharField(max_length=500, blank=True)
    job = models.ForeignKey("console.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
                            help_text="The rule's last job over this letter; while it is unfinished no rule acts again")
    acted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["next_at"], condition=models.Q(next_at__isnull=False),
                                name="handling_due")]


class RuleInbox(models.Model):
    """A letter the rules are to decide, and from when (console.services.rule_inbox): put here
    when it arrives held or becomes open again, when a change of the rule set may decide it
    otherwise, or for later (a ladder's next try, an age a rule waits for). A round takes the
    due ones and removes them once decided. ``seq`` is new at every put, so a round removes
    only the rows it took, never one put again meanwhile. No foreign key: a letter's capture and
    purge pay nothing for it; a row whose letter is gone is dropped when taken."""

    letter_id = models.BigIntegerField(primary_key=True)
    due_at = models.DateTimeField()
    seq = models.BigIntegerField(help_text="From the sequence console_ruleinbox_seq, new at every put")

    class Meta:
        indexes = [models.Index(fields=["due_at"], name="rule_inbox_due")]
