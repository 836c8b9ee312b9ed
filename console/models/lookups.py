"""``<field>__any=values``: ``<field> = ANY(%s)``, the values sent as one array parameter.

Django's ``__in`` writes a placeholder per value, which psycopg splits and PostgreSQL parses
one by one: a rule's dry run over the many letters it matched spent much of its time preparing
such queries (see benchmarks/README.md, rules_scale.py). Use it where the values may be many
(a rule's letters, a round's decisions)."""

from __future__ import annotations

from typing import Any

from django.db.models import Field, ForeignObject, Lookup


@Field.register_lookup
@ForeignObject.register_lookup
class AnyOf(Lookup):
    lookup_name = "any"
    prepare_rhs = False

    def get_prep_lookup(self) -> Any:
        return [self.lhs.output_field.get_prep_value(value) for value in self.rhs]

    def as_sql(self, compiler, connection) -> tuple[str, tuple[Any, ...]]:
        lhs, params = self.process_lhs(compiler, connection)
        return f"{lhs} = ANY(%s)", (*params, list(self.rhs))
