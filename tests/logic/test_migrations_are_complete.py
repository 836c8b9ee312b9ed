"""Every model change has its migration: a new model field without one fails here, not in
production."""

from __future__ import annotations

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_makemigrations_finds_nothing_to_do():
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)
