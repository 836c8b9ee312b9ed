"""The console's metrics in Prometheus's terms (prometheus_client), read from the database at
each scrape, so every gunicorn and Celery process answers the same.

Gauges: ``dlo_place_depth``, ``dlo_place_held_letters`` and ``dlo_place_oldest_letter_age_seconds``
(labels broker, place), ``dlo_letters`` (state), ``dlo_jobs`` (kind, status), ``dlo_broker_up``
(broker: 1 answered the last check, 0 did not; no sample before the first check),
``dlo_objective_attainment`` and ``dlo_objective_oldest_age_seconds`` (broker, place, origin,
view, objective, kind: as the objectives' last evaluation judged them). Counters:
``dlo_place_arrivals_total`` (letters ever taken into custody from a place, tombstones
included, so it only grows) and ``dlo_rule_actions_total`` (rule, action: letters the rule's jobs
handled, and letters it held for a person), ``dlo_notifications_failed_total`` (channel:
messages given up after every attempt). A place's label is its name as the pages show it
(``scope/name`` when it has a scope other than RabbitMQ's "/").

Names people chose (brokers, places, rules, channels) leave as labels masked by every redaction
rule: a scraper has no role, so it reads what an export would (enum values, such as a state or a
job's kind, are made by code and left as they are)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from django.db.models import Count, Q, Sum
from django.utils import timezone
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from console.access.redaction_policy import for_everyone
from console.models import Broker, Channel, DeadPlace, Delivery, Job, LetterHandling, LetterState, Objective
from console.services import group_counts


def _place_label(place: Mapping[str, Any]) -> str:
    scope = place["scope"] if place["scope"] not in ("", "/") else ""
    return f"{scope}/{place['name']}" if scope else place["name"]


class ConsoleCollector(Collector):
    def collect(self) -> Iterator[Metric]:
        self.label = for_everyone().string  # names as an export shows them
        # From the failure groups' counts (console.services.group_counts): a scrape reads a few
        # rows per place, not every letter.
        counts = group_counts.in_custody()
        yield from self._places(counts)
        letters = GaugeMetricFamily("dlo_letters", "Letters in custody by state", labels=["state"])
        by_state: dict[str, int] = {}
        for (_, state, _), n in counts.items():
            by_state[state] = by_state.get(state, 0) + n
        for state in LetterState.values:
            letters.add_metric([state], by_state.get(state, 0))
        yield letters
        jobs = GaugeMetricFamily("dlo_jobs", "Jobs by kind and status", labels=["kind", "status"])
        for kind, status, n in Job.objects.values_list("kind", "status").annotate(n=Count("id")).order_by():
            jobs.add_metric([kind, status], n)
        yield jobs
        up = GaugeMetricFamily("dlo_broker_up", "1 when the broker answered the last check", labels=["broker"])
        for name, reachable in Broker.objects.filter(reachable__isnull=False).values_list("name", "reachable"):
            up.add_metric([self.label(name)], 1 if reachable else 0)
        yield up
        yield self._rule_actions()
        yield from self._objectives()
        failed = CounterMetricFamily("dlo_notifications_failed", "Notifications given up after every attempt",
                                     labels=["channel"])
        for name, n in Channel.objects.values_list("name").annotate(
                n=Count("deliveries", filter=Q(deliveries__status=Delivery.Status.FAILED))).order_by():
            failed.add_metric([self.label(name)], n)
        yield failed

    def _places(self, counts: dict[tuple[int, str, str], int]) -> Iterator[Metric]:
        labels = ["broker", "place"]
        depth = GaugeMetricFamily("dlo_place_depth", "Messages waiting in the dead place on its broker", labels=labels)
        held = GaugeMetricFamily("dlo_place_held_letters", "Letters of the place held in custody", labels=labels)
        oldest = GaugeMetricFamily("dlo_place_oldest_letter_age_seconds",
                                   "Age of the place's oldest held letter (since its capture)", labels=labels)
        arrivals = CounterMetricFamily("dlo_place_arrivals", "Letters taken into custody from the place",
                                       labels=labels)
        now = timezone.now()
        by_place: dict[int, dict[str, int]] = {}
        for (place_id, state, _), n in counts.items():
            states = by_place.setdefault(place_id, {})
            states[state] = states.get(state, 0) + n
        first_held = group_counts.first_captured(key for key in counts if key[1] == LetterState.HELD)
        for place in DeadPlace.objects.filter(gone=False).values("pk", "name", "scope", "depth", "broker__name"):
            values = [self.label(place["broker__name"]), self.label(_place_label(place))]
            states = by_place.get(place["pk"], {})
            if place["depth"] is not None:
                depth.add_metric(values, place["depth"])
            held.add_metric(values, states.get(LetterState.HELD, 0))
            first = first_held.get(place["pk"])
            oldest.add_metric(values, (now - first).total_seconds() if first else 0)
            arrivals.add_metric(values, sum(states.values()))
        yield from (depth, held, oldest, arrivals)

    def _objectives(self) -> Iterator[Metric]:
        """As the last evaluation judged them (console.services.objectives): labelled as the place
        metrics are (broker, place: empty for an objective on an origin or a view), with the
        objective's name, its kind, its origin and its view (each empty for one on another target)."""
        labels = ["broker", "place", "origin", "view", "objective", "kind"]
        attainment = GaugeMetricFamily(
            "dlo_objective_attainment", "Share of the letters of the last 7 days resolved within the objective's "
            "time (0..1), of those whose outcome is known", labels=labels)
        oldest = GaugeMetricFamily("dlo_objective_oldest_age_seconds",
                                   "Age of the oldest held letter the objective is about (0 when none)", labels=labels)
        for objective in Objective.objects.select_related("place__broker", "origin__broker", "view"):
            if objective.place is not None:
                place = {"name": objective.place.name, "scope": objective.place.scope}
                where = [objective.place.broker.name, _place_label(place), "", ""]
            elif objective.view is not None:
                where = ["", "", "", objective.view.name]
            else:
                assert objective.origin is not None  # one target (a constraint)
                where = [objective.origin.broker.name, "", objective.origin.name, ""]
            values = [*(self.label(text) for text in where), self.label(objective.name), objective.kind]
            if objective.attainment_7d is not None:
                attainment.add_metric(values, objective.attainment_7d)
            oldest.add_metric(values, objective.oldest_age_seconds or 0)
        yield from (attainment, oldest)

    def _rule_actions(self) -> Metric:
        actions = CounterMetricFamily("dlo_rule_actions", "Letters a rule acted on, by what it did",
                                      labels=["rule", "action"])
        done: dict[tuple[str, str], int] = {}
        for actor, kind, letters in (Job.objects.filter(actor_name__startswith="rule:")
                                     .values_list("actor_name", "kind").annotate(n=Sum("done")).order_by()):
            key = (actor[len("rule:"):].rsplit("@v", 1)[0], kind)
            done[key] = done.get(key, 0) + (letters or 0)
        for name, n in (LetterHandling.objects.filter(held=True, rule__isnull=False)
                        .values_list("rule__name").annotate(n=Count("letter_id")).order_by()):
            done[(name, "hold")] = n
        for (rule, action), n in sorted(done.items()):
            actions.add_metric([self.label(rule), action], n)
        return actions
