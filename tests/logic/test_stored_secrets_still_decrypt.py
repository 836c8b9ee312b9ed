"""A broker's password, a channel's secret and a channel target's credentials are kept through
one encrypted field (console.secrets.encrypted_secret): tokens already in the database, written
before it, still decrypt, and what it writes is a plain Fernet token under the configured key."""

from __future__ import annotations

import pytest
from cryptography.fernet import Fernet
from django.db import connection

from console import secrets
from console.models import Broker, Channel

pytestmark = pytest.mark.django_db

KEY = "BLwZvVEq7fGr-Jj-lzIHFkcY2YodI3jcdWW8k-gwGOU="
# Written by the code before the field (console.secrets.encrypt under KEY), as a database holds them.
OLD_PASSWORD = ("gAAAAABrCBjFwKeC_SUzoyhXkSvL1zGt4E6HyE40H5HrGVGhqXKgClWqSd_WBAJqcwYlWwd9RuCSJjrfCXbskk"
                "-Okdio59MVQA==")
OLD_SECRET = ("gAAAAABrCBjFKn_KdS9XRdIQmohXTN-wwM9MEpRYxBQNvwKECvZ_sYOnhcGZ6rO-e8fMkFNe6zSmRbsCiMg4o26A"
              "NJVeXlbIBA==")
OLD_TARGET = ("gAAAAABrCBjFuzVunj9WkVLS8S84P2NGGFYNg5og__Nr0FsH1PwgVbwy3hpaOgmh18wBV0AkdIx5jCXfZDUhIiJWR"
              "-JdOnDXb3QM4o3C5Q5IIkCz54F6UmpldV8NifWGkVoEGmi_gXEN")


@pytest.fixture(autouse=True)
def fixed_key(settings):
    settings.FIELD_ENCRYPTION_KEYS = [KEY]
    secrets._fernet.cache_clear()
    yield
    secrets._fernet.cache_clear()


def _column(table: str, column: str, pk: int) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {column} FROM {table} WHERE id = %s", [pk])
        return cursor.fetchone()[0]


def test_tokens_written_before_the_field_still_decrypt():
    broker = Broker.objects.create(name="old", kind="memory", url="memory://old")
    channel = Channel.objects.create(name="old", kind="webhook", target="https://***@hooks.example.com/in?sig=***",
                                     created_by="ada")
    Broker.objects.filter(pk=broker.pk).update(password_encrypted=OLD_PASSWORD)
    Channel.objects.filter(pk=channel.pk).update(secret_encrypted=OLD_SECRET, target_credentials_encrypted=OLD_TARGET)

    broker, channel = Broker.objects.get(pk=broker.pk), Channel.objects.get(pk=channel.pk)
    assert broker.password == "br0ker-pa55" and broker.config().password == "br0ker-pa55"
    assert channel.secret == "hm4c-s3cret"
    assert channel.delivery_target == "https://ops:p4ss@hooks.example.com/in?sig=s1g"


def test_what_the_field_writes_is_encrypted_and_readable_by_the_key_alone():
    broker = Broker.objects.create(name="new", kind="memory", url="memory://new", password="n3w-pa55")
    channel = Channel(name="new", kind="webhook", created_by="ada", secret="n3w-s3cret")
    channel.set_target("https://ops:n3w-p4ss@hooks.example.com/in")
    channel.save()

    stored = {
        "n3w-pa55": _column("console_broker", "password_encrypted", broker.pk),
        "n3w-s3cret": _column("console_channel", "secret_encrypted", channel.pk),
        "https://ops:n3w-p4ss@hooks.example.com/in": _column("console_channel", "target_credentials_encrypted",
                                                             channel.pk),
    }
    for plain, token in stored.items():
        assert plain not in token
        assert Fernet(KEY).decrypt(token.encode()).decode() == plain  # as the code before the field reads it
    assert Channel.objects.get(pk=channel.pk).target == "https://***@hooks.example.com/in"


def test_no_secret_is_stored_as_empty_and_reads_empty():
    broker = Broker.objects.create(name="none", kind="memory", url="memory://none", password="")
    channel = Channel.objects.create(name="none", kind="email", target="ops@example.com", created_by="ada",
                                     secret=None)
    channel.set_target("ops@example.com")
    channel.save()
    channel.refresh_from_db()
    assert (broker.password_encrypted, broker.password, broker.has_password) == ("", "", False)
    assert (channel.secret_encrypted, channel.secret) == ("", "")
    assert (channel.target_credentials_encrypted, channel.delivery_target) == ("", "ops@example.com")


def test_a_token_under_another_key_is_refused_not_misread(settings):
    broker = Broker.objects.create(name="rotated", kind="memory", url="memory://rotated")
    Broker.objects.filter(pk=broker.pk).update(password_encrypted=OLD_PASSWORD)
    settings.FIELD_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
    secrets._fernet.cache_clear()
    with pytest.raises(ValueError, match="cannot be decrypted"):
        _ = Broker.objects.get(pk=broker.pk).password
    settings.FIELD_ENCRYPTION_KEYS = [Fernet.generate_key().decode(), KEY]  # rotated: the old key still reads
    secrets._fernet.cache_clear()
    assert Broker.objects.get(pk=broker.pk).password == "br0ker-pa55"
