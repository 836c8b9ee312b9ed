"""manage.py discover [BROKER ...]: find the dead places of some or all brokers."""

from __future__ import annotations

from django.core.management.base import CommandError

from console.brokers import BrokerError
from console.management.cli import ActorCommand, broker_named, printable
from console.models import Broker
from console.services.brokers import do_discover


class Command(ActorCommand):
    help = "Ask brokers for their dead places (all brokers by default) and print them with depth."

    def add_arguments(self, parser) -> None:
        super().add_arguments(parser)
        parser.add_argument("brokers", nargs="*", metavar="BROKER", help="Broker names (default: all)")

    def handle(self, *args, **options) -> None:
        names = options["brokers"]
        brokers = [broker_named(n) for n in names] if names else list(Broker.objects.all())
        if not brokers:
            raise CommandError("no brokers yet: add one with `manage.py add_broker`")
        failed = []
        for broker in brokers:
            try:
                places = do_discover(broker, actor=self.actor(options))
            except BrokerError as exc:
                self.stderr.write(f"{broker.name}: discovery failed: {printable(exc.message)}")
                failed.append(broker.name)
                continue
            self.stdout.write(f"{broker.name}: {len(places)} dead place(s)")
            for place in places:
                self.stdout.write("  " + self._line(place))
        if failed:
            raise CommandError(f"discovery failed for {', '.join(failed)}")

    @staticmethod
    def _line(place) -> str:
        depth = "?" if place.depth is None else place.depth
        consumers = "?" if place.consumers is None else place.consumers
        origins = ", ".join(printable(o, 80) for o in place.origins[:5]) or "-"
        return (f"[{place.pk}] {printable(place)}  depth {depth}  consumers {consumers}  "
                f"found by {place.discovered_by}  origins: {origins}")
