"""Before the pipeline's first run, the analytics and history pages name the command that computes
them as it runs on this install (the console's own Python, DEBUG=true for a console in debug
mode), and that command runs from the console's folder in a shell with no virtualenv and no
SECRET_KEY, as a newcomer's second terminal would be."""

from __future__ import annotations

import html
import os
import re
import subprocess

import pytest
from django.conf import settings
from django.urls import reverse

from tests.workers import test_database_url

pytestmark = pytest.mark.django_db


def _command(page: str) -> str:
    return html.unescape(re.search(r"<code>([^<]*manage\.py pipeline [a-z]+)</code>", page).group(1))


def _runs(command: str) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items()
           if key not in {"SECRET_KEY", "DEBUG", "VIRTUAL_ENV", "DJANGO_SETTINGS_MODULE"}}
    env["PATH"] = "/usr/local/bin:/usr/bin:/bin"
    env["DATABASE_URL"] = test_database_url()  # not the embedded server under var/pgdata
    return subprocess.run(["bash", "-c", f"{command} --help"], cwd=settings.BASE_DIR, env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_empty_pages_name_the_console_s_own_python(signed_in, settings):
    settings.DEBUG = False
    analytics = _command(signed_in.get(reverse("analytics")).content.decode())
    history = _command(signed_in.get(reverse("groups-history")).content.decode())
    assert analytics == ".venv/bin/python manage.py pipeline analytics"
    assert history == ".venv/bin/python manage.py pipeline groups"


def test_in_debug_mode_the_command_says_so_and_runs(signed_in, settings):
    settings.DEBUG = True
    command = _command(signed_in.get(reverse("analytics")).content.decode())
    assert command == "DEBUG=true .venv/bin/python manage.py pipeline analytics"
    done = _runs(command)
    assert done.returncode == 0, done.stderr
    assert "Run a pipeline job on Spark" in done.stdout
    assert _runs(command.removeprefix("DEBUG=true ")).returncode != 0  # what the prefix is for
