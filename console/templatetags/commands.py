"""``{% manage_command "pipeline analytics" %}``: the command line that runs a management command
on this install, from the console's folder, as an empty state names it: the Python the console
runs on (``.venv/bin/python`` under ``make run``; a bare ``python`` may have none of its
packages), with ``DEBUG=true`` before it when the console runs in debug mode, where manage.py
would otherwise ask for a SECRET_KEY."""

from __future__ import annotations

import sys
from pathlib import Path

from django import template
from django.conf import settings

register = template.Library()


@register.simple_tag
def manage_command(arguments: str) -> str:
    python = Path(sys.executable)
    if python.is_relative_to(settings.BASE_DIR):
        python = python.relative_to(settings.BASE_DIR)
    debug = "DEBUG=true " if settings.DEBUG else ""
    return f"{debug}{python} manage.py {arguments}"
