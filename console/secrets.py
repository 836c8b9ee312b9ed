"""Encryption at rest for credentials (Fernet, with key rotation): a broker's password, a
notification channel's secret and the credentials in its target.

Keys come from ``FIELD_ENCRYPTION_KEY`` (comma separated, first one encrypts) or its
``_FILE`` twin; without one, a key is derived from ``SECRET_KEY``. A model keeps the token in
a text field and reads and writes the plain secret through :func:`encrypted_secret`.
"""

from __future__ import annotations

import base64
import hashlib
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings


@lru_cache(maxsize=1)
def _fernet() -> MultiFernet:
    keys = list(settings.FIELD_ENCRYPTION_KEYS)
    if not keys:
        derived = hashlib.sha256(b"dlo-field-encryption:" + settings.SECRET_KEY.encode()).digest()
        keys = [base64.urlsafe_b64encode(derived).decode()]
    return MultiFernet([Fernet(key.encode() if isinstance(key, str) else key) for key in keys])


def encrypt(plain: str) -> str:
    if not plain:
        return ""
    return _fernet().encrypt(plain.encode()).decode()


def decrypt(token: str) -> str:
    if not token:
        return ""
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken:
        raise ValueError("a stored secret cannot be decrypted with the configured keys") from None



def encrypted_secret(column: str) -> property:
    """A model's secret kept encrypted in its text field ``column``: reading the property
    decrypts the token, setting it stores a new token (nothing given stores ""). A property,
    so Django's ``Model(name=...)`` and ``objects.create(name=...)`` take it as they take a
    field."""

    def read(instance) -> str:
        return decrypt(getattr(instance, column))

    def write(instance, plain: str | None) -> None:
        setattr(instance, column, encrypt(plain or ""))

    return property(read, write, doc=f"The secret kept encrypted in ``{column}``.")
