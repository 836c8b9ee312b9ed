"""No broker password, no URL credentials and no JWT in any log line.

``mask`` replaces every broker password the console knows (decrypted once, cached, refreshed
when a broker is saved or deleted), the user-info of any URL (``scheme://user:pass@``) and
anything shaped like a JWT (an identity provider's access or ID token, an ``id_token_hint``
in a logout URL: each one is a credential while it lasts) with ``***``. ``SecretsFilter``
applies it to a record's message, arguments and exception text; it is installed both as the
filter of the handlers in settings.LOGGING and, through ``install_record_factory``, on every
record as it is made, so handlers added later (pytest's caplog, a Celery worker's) never see a
secret either.
"""

from __future__ import annotations

import logging
import re
import threading
import traceback

MASK = "***"
_USERINFO = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s'\"<>]+@")
#: A JWS in compact form whose header is JSON (base64url of '{"'): header.payload.signature.
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")

_lock = threading.Lock()
_passwords: list[str] | None = None
#: Passwords seen on Broker rows loaded or saved in this process: known even where the
#: database cannot be read (an event loop's thread, a failed transaction).
_remembered: set[str] = set()
_loading = threading.local()


def forget_passwords(**_kwargs) -> None:
    """Drop the cache (a broker was saved or deleted); the next log line reloads it."""
    global _passwords
    with _lock:
        _passwords = None


def remember(password: str) -> None:
    """Mask this password from now on (whether or not it is stored yet)."""
    global _passwords
    if password and password not in _remembered:
        with _lock:
            _remembered.add(password)
            _passwords = None


def remember_broker(instance, **_kwargs) -> None:
    """post_init/post_save of Broker: remember its password, if it was loaded with the row."""
    if instance.__dict__.get("password_encrypted"):
        try:
            remember(instance.password)
        except ValueError:  # not decryptable with the configured keys: nothing to leak
            pass


def _known_passwords() -> list[str]:
    global _passwords
    if _passwords is not None:
        return _passwords
    if getattr(_loading, "active", False):
        return []  # a log line written while loading them (e.g. the SQL logger)
    _loading.active = True
    try:
        from console import secrets
        from console.models import Broker

        tokens = Broker.objects.exclude(password_encrypted="").values_list("password_encrypted", flat=True)
        loaded = {secrets.decrypt(token) for token in tokens} - {""}
    except Exception:  # noqa: BLE001 - no database here (startup, an event loop): retry on the next line
        return sorted(_remembered, key=len, reverse=True)
    finally:
        _loading.active = False
    with _lock:
        _passwords = sorted(set(loaded) | _remembered, key=len, reverse=True)
    return _passwords


def mask(text: str) -> str:
    """``text`` with known broker passwords, URL credentials and JWTs replaced by ***."""
    if not text:
        return text
    text = _USERINFO.sub(lambda m: f"{m['scheme']}{MASK}@", text)
    text = _JWT.sub(MASK, text)
    for password in _known_passwords():  # longest first: no half-masked overlaps
        if password in text:
            text = text.replace(password, MASK)
    return text


def mask_record(record: logging.LogRecord) -> logging.LogRecord:
    """Mask a record in place: its message is rendered with its arguments, then masked."""
    if getattr(record, "_dlo_masked", False):
        return record
    try:
        message = record.getMessage()
    except Exception:  # noqa: BLE001 - a malformed record is logging's own problem to report
        return record
    record.msg, record.args = mask(message), None
    if record.exc_info and not record.exc_text:
        record.exc_text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
    if record.exc_text:
        record.exc_text = mask(record.exc_text)
    if record.stack_info:
        record.stack_info = mask(record.stack_info)
    record._dlo_masked = True
    return record


class SecretsFilter(logging.Filter):
    """A logging filter that masks secrets (see the module docstring); it never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        mask_record(record)
        return True


def install_record_factory() -> None:
    """Mask every record when it is created, whichever logger and handler it goes to."""
    current = logging.getLogRecordFactory()
    if getattr(current, "_dlo_masking", False):
        return

    def factory(*args, **kwargs):
        return mask_record(current(*args, **kwargs))

    factory._dlo_masking = True  # type: ignore[attr-defined]  # our mark on the factory, read above
    logging.setLogRecordFactory(factory)
