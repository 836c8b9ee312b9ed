"""manage.py add_broker NAME --kind rabbitmq --url URL --management-url URL [--username U]
[--password P | --password-file F]"""

from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError

from console.brokers import BrokerError
from console.brokers.registry import KINDS
from console.management.cli import ActorCommand, printable
from console.services.brokers import BrokerSetupError, check_broker, do_add_broker


class Command(ActorCommand):
    help = (
        "Add a broker. Credentials may be given in the URLs (they are taken out and kept "
        "encrypted), with --username/--password, or with --password-file."
    )

    def add_arguments(self, parser) -> None:
        super().add_arguments(parser)
        parser.add_argument("name", help="Short name, e.g. prod-rabbit")
        parser.add_argument("--kind", default="rabbitmq", choices=sorted(KINDS))
        parser.add_argument("--url", required=True, help="e.g. amqp://user:pass@host:5672/vhost")
        parser.add_argument("--management-url", default="", help="e.g. http://host:15672")
        parser.add_argument("--username", default="")
        secret = parser.add_mutually_exclusive_group()
        secret.add_argument("--password", default="")
        secret.add_argument("--password-file", type=Path, help="File holding the password")
        parser.add_argument("--no-check", action="store_true", help="Do not try to connect")

    def handle(self, *args, **options) -> None:
        password = options["password"]
        if options["password_file"] is not None:
            try:
                password = options["password_file"].read_text().rstrip("\r\n")
            except OSError as exc:
                raise CommandError(f"cannot read --password-file: {exc.strerror}") from None
        try:
            broker = do_add_broker(
                actor=self.actor(options), name=options["name"], kind=options["kind"], url=options["url"],
                management_url=options["management_url"], username=options["username"], password=password,
            )
        except BrokerSetupError as exc:
            raise CommandError(str(exc)) from None
        except ValidationError as exc:  # the model's own checks: a bad name, a URL too long
            raise CommandError(f"broker refused: {'; '.join(exc.messages)}") from None
        secret = "kept encrypted" if broker.has_password else "none"
        self.stdout.write(
            f"added broker {broker.name} ({broker.kind}) at {printable(broker.url)}; "
            f"user {printable(broker.username) or '-'}, password {secret}"
        )
        if options["no_check"]:
            return
        try:
            facts = check_broker(broker)
        except BrokerError as exc:
            self.stderr.write(f"warning: {broker.name} did not answer: {printable(exc.message)}")
            return
        self.stdout.write(f"{broker.name} answers (version {printable(facts.get('version', '?'))})")
