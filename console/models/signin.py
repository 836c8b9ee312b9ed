"""Failed sign-ins, counted by console.security.signin to lock out password guessing."""

from __future__ import annotations

from django.db import models


class SignInFailure(models.Model):
    """One failed sign-in: the name tried and the address it came from."""

    username = models.CharField(max_length=150, db_index=True)
    ip = models.GenericIPAddressField(null=True, blank=True, db_index=True)
    at = models.DateTimeField(auto_now_add=True, db_index=True)

    def __str__(self) -> str:
        return f"failed sign-in as {self.username!r} from {self.ip} at {self.at:%Y-%m-%d %H:%M:%S}"
