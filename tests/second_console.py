"""Another console beside the one under test, as a staging site would run it: its own database
(created and migrated by ``manage.py migrate``), ``gunicorn console.wsgi`` on a loopback port, a
real Celery worker (tests.workers) on its own task folder, and an admin's API token. Tests talk
to it over HTTP only, as to any other site."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg

from tests.web_process import serving
from tests.workers import PROJECT, Worker, test_database_url


@dataclass
class SecondConsole:
    base: str
    token: str
    client: httpx.Client


def _fresh_database(url: str) -> None:
    parts = urlsplit(url)
    with psycopg.connect(urlunsplit(parts._replace(path="/postgres")), autocommit=True) as conn:
        name = parts.path.lstrip("/")
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def started(tmp_path: Path):
    """Start the second console; yields it, and stops it (and drops its database) afterwards."""
    parts = urlsplit(test_database_url())
    url = urlunsplit(parts._replace(path=parts.path + "_second"))
    _fresh_database(url)
    folder = tmp_path / "second-celery"
    env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "console.settings",
           "CELERY_BROKER_URL": "filesystem://", "CELERY_FILESYSTEM_DIR": str(folder)}
    run = {"cwd": PROJECT, "env": env, "check": True, "capture_output": True}
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], **run)
    token = subprocess.run([sys.executable, "manage.py", "shell", "-c",
                            "from django.contrib.auth import get_user_model\n"
                            "from rest_framework.authtoken.models import Token\n"
                            "from console.access.roles import ADMIN, set_role\n"
                            "user = get_user_model().objects.create_user('stella')\n"
                            "set_role(user, ADMIN)\n"
                            "print(Token.objects.create(user=user).key)"], **run).stdout.decode().split()[-1]
    worker = Worker(folder, tmp_path / "second-worker.log", DATABASE_URL=url)
    worker.start()
    try:
        with serving(tmp_path / "second-web.log", DATABASE_URL=url, CELERY_BROKER_URL="filesystem://",
                     CELERY_FILESYSTEM_DIR=str(folder)) as base, \
                httpx.Client(base_url=base, headers={"Authorization": f"Token {token}"}, timeout=60) as client:
            yield SecondConsole(base, token, client)
    finally:
        worker.kill()
        with psycopg.connect(urlunsplit(parts._replace(path="/postgres")), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{urlsplit(url).path.lstrip("/")}" WITH (FORCE)')
