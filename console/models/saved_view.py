from __future__ import annotations

from django.conf import settings
from django.db import models


class SavedView(models.Model):
    """A letter selection people keep (issue 51): a name, a description and a filter (the keys
    of console.services.selection, and ``older_than`` in hours, relative to each look), owned by
    one person and shared with no one, everyone, or the holders of a role. What a view shows is
    always what its reader may see (console.services.saved_views)."""

    class Sharing(models.TextChoices):
        PRIVATE = "private"
        EVERYONE = "everyone"
        ROLE = "role"

    name = models.CharField(max_length=100)
    description = models.TextField(blank=True, max_length=2000)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    filter = models.JSONField(default=dict)
    sharing = models.CharField(max_length=10, choices=Sharing.choices, default=Sharing.PRIVATE)
    role = models.CharField(max_length=20, blank=True, help_text="The role it is shared with (sharing: role)")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        indexes = [models.Index(fields=["sharing", "role"], name="saved_view_sharing")]

    def __str__(self) -> str:
        return self.name
