"""Loaded by pytest (``-p tests.testenv`` in pytest.ini) before Django reads its settings."""

import os

os.environ.setdefault("SECRET_KEY", "tests-only-secret-key")
os.environ.setdefault("DEBUG", "false")
os.environ.setdefault("SECURE_COOKIES", "false")
