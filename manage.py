#!/usr/bin/env python
"""Django's command-line utility for Dead Letter Office."""

import os
import sys

#: The command that reports on or stops the embedded PostgreSQL (console/embedded.py starts that
#: server whenever settings load without DATABASE_URL, so asking its status would start it).
EMBEDDED_POSTGRES = "embedded_postgres"
#: Given to settings for that command only: read, never connected to.
UNUSED_DATABASE_URL = "postgres://unused@127.0.0.1:1/unused"


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
    if sys.argv[1:2] == [EMBEDDED_POSTGRES]:
        os.environ.setdefault("DATABASE_URL", UNUSED_DATABASE_URL)
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
