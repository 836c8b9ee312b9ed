"""Typed helpers that read settings from the environment and fail loudly.

Every secret may also come from a file: ``SECRET_KEY_FILE=/run/secrets/key`` is read
when ``SECRET_KEY`` is not set.
"""

from __future__ import annotations

import os
from pathlib import Path


class ConfigError(RuntimeError):
    """A setting in the environment is missing or malformed."""


def env_str(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    if value is not None:
        return value
    path = os.environ.get(f"{name}_FILE")
    if path:
        try:
            return Path(path).read_text().strip()
        except OSError as exc:
            raise ConfigError(f"{name}_FILE={path!r} cannot be read: {exc}") from exc
    return default


def env_bool(name: str, default: bool = False) -> bool:
    value = env_str(name)
    if value is None or value == "":
        return default
    lowered = value.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ConfigError(f"{name}={value!r} is not a boolean (use true or false)")


def env_int(name: str, default: int) -> int:
    value = env_str(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError as exc:
        raise ConfigError(f"{name}={value!r} is not a whole number") from exc


def env_float(name: str, default: float) -> float:
    value = env_str(name)
    if value is None or value == "":
        return default
    try:
        return float(value)
    except ValueError as exc:
        raise ConfigError(f"{name}={value!r} is not a number") from exc


def env_list(name: str, default: list[str]) -> list[str]:
    value = env_str(name)
    if value is None or value.strip() == "":
        return default
    return [item.strip() for item in value.split(",") if item.strip()]
