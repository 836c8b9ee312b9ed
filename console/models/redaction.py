"""Redaction rules: what of a letter's body and headers is masked for viewers and in exports
(masked by console.access.redactor for whom console.access.redaction_policy says, changed through
console.services.redaction)."""

from __future__ import annotations

from django.db import models


class RedactionRule(models.Model):
    """One thing to mask: a JSON path into JSON bodies, a header name, or a regular expression
    matched against text bodies, header values and audit details."""

    class Kind(models.TextChoices):
        JSON_PATH = "json_path", "JSON path (e.g. $.card.number, $..email, $.items[*].iban)"
        HEADER = "header", "Header name (case-insensitive; * matches any characters)"
        REGEX = "regex", "Regular expression (e.g. card numbers)"

    kind = models.CharField(max_length=20, choices=Kind.choices)
    pattern = models.CharField(max_length=500)
    note = models.CharField(max_length=200, blank=True, help_text="Why this is masked")
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["kind", "pattern"]
        constraints = [models.UniqueConstraint(fields=["kind", "pattern"], name="redaction_rule_unique")]

    def __str__(self) -> str:
        return f"{self.kind}: {self.pattern}"
