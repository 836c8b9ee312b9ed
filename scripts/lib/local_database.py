"""Print the URL of the local PostgreSQL server's ``dlo`` database, creating it if missing.

Prints nothing when no server answers on 127.0.0.1:5432, so that the caller falls back to
the embedded PostgreSQL (console/embedded.py). Used by scripts/test.
"""

from __future__ import annotations

import sys

import psycopg
from psycopg import sql

SERVER = "postgres://postgres@127.0.0.1:5432"
DATABASE = "dlo"


def main() -> int:
    try:
        conn = psycopg.connect(f"{SERVER}/postgres", connect_timeout=3, autocommit=True)
    except psycopg.OperationalError:
        return 0
    with conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE]).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE)))
    print(f"{SERVER}/{DATABASE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
