"""Failure groups counted by the database, not by reading the letters.

Triggers on the letters table (migrations 0030 and 0061) add a row of +n or -n to ``GroupCount`` for
every letter inserted, deleted or moved to another place, state, fingerprint or origin, by any
path, in the same transaction. A group's count is the sum of its rows: exact in every
snapshot, under capture, replay, purge, retention or any other change. ``fold`` keeps the rows
few, by replacing each key's rows with their sum (the Celery task ``console.fold_group_counts``,
on beat).

``groups`` answers the failure groups of a filter the counts are kept by (place, broker, state,
fingerprint, reason, exception) from these rows; a group's first and last letters, and its sample, are then read
at the ends of the ``letter_groups`` index, one probe per place and state the group is in.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.db.models import QuerySet, Sum

from console.models import GroupCount
from console.services.selection import clean_filter, filter_letters

#: The filter keys a count is kept by: any other needs the letters themselves.
COUNTED_KEYS = frozenset({"place", "broker", "state", "fingerprint", "reason", "exception"})

#: The lock ``fold`` holds, so that two folds do not sum the same rows twice over.
FOLD_LOCK = 0x646C6F6763  # "dlogc"


def counted(params: dict[str, Any]) -> bool:
    """Whether the counts can answer the filter ``params``."""
    return set(clean_filter(params)) <= COUNTED_KEYS


def fold() -> int:
    """Each key's rows replaced by one row of their sum (none when it is zero); returns how
    many rows were folded away."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [FOLD_LOCK])
        if not cursor.fetchone()[0]:
            return 0  # another fold is under way
        key = "place_id, broker_id, state, fingerprint, origin_queue, reason, exception_type, day"
        cursor.execute(
            f"""WITH many AS (
                    SELECT {key} FROM console_groupcount GROUP BY {key} HAVING count(*) > 1
                ), gone AS (
                    DELETE FROM console_groupcount AS c USING many AS m
                     WHERE (c.place_id, c.broker_id, c.state, c.fingerprint, c.origin_queue, c.reason,
                            c.exception_type, c.day)
                         = (m.place_id, m.broker_id, m.state, m.fingerprint, m.origin_queue, m.reason,
                            m.exception_type, m.day)
                    RETURNING c.*
                ), kept AS (
                    INSERT INTO console_groupcount ({key}, letters)
                    SELECT {key}, sum(letters) FROM gone GROUP BY {key} HAVING sum(letters) <> 0
                    RETURNING 1
                )
                SELECT (SELECT count(*) FROM gone) - (SELECT count(*) FROM kept)"""
        )
        folded: int = cursor.fetchone()[0]
        return folded


def groups(params: dict[str, Any], counts: QuerySet[GroupCount], limit: int) -> list[dict[str, Any]]:
    """The largest groups among the counts ``counts`` (narrowed to what a reader may see)
    matching ``params``: fingerprint, count, origins, places, first and last seen and the
    sample (the group's first letter), biggest first."""
    rows = list(
        filter_letters(params, counts)
        .values("fingerprint", "origin_queue", "place_id", "state")
        .annotate(letters=Sum("letters"))
        .filter(letters__gt=0)
        .order_by()
    )
    found: dict[str, dict[str, Any]] = {}
    for row in rows:
        group = found.setdefault(row["fingerprint"], {"fingerprint": row["fingerprint"], "count": 0, "origins": set(),
                                                      "places": set(), "keys": set()})
        group["count"] += row["letters"]
        group["origins"].add(row["origin_queue"])
        group["places"].add(row["place_id"])
        group["keys"].add((row["place_id"], row["state"]))
    top = sorted(found.values(), key=lambda g: (-g["count"], g["fingerprint"]))[:limit]
    ends = _ends((place, state, group["fingerprint"]) for group in top for place, state in group["keys"])
    result = []
    for group in top:
        # A key whose letters were all deleted since they were counted has no ends.
        found_ends = [ends[key] for key in ((p, s, group["fingerprint"]) for p, s in group["keys"]) if key in ends]
        if not found_ends:
            continue
        firsts, lasts = zip(*found_ends, strict=True)
        first_seen, sample_id = min(firsts)
        result.append({"fingerprint": group["fingerprint"], "count": group["count"], "first_seen": first_seen,
                       "last_seen": max(lasts), "origins": list(group["origins"]), "places": list(group["places"]),
                       "sample_id": sample_id})
    return result


def in_custody() -> dict[tuple[int, str, str], int]:
    """Letters in custody per (place, state, fingerprint), from the counts (keys with none left out)."""
    return {(place_id, state, fingerprint): letters for place_id, state, fingerprint, letters in (
        GroupCount.objects.values_list("place_id", "state", "fingerprint")
        .annotate(n=Sum("letters")).filter(n__gt=0).order_by())}


def first_captured(keys: Iterable[tuple[int, str, str]]) -> dict[int, datetime]:
    """Per place, when its first letter of any of ``keys`` (place, state, fingerprint) was
    captured: one probe at the end of ``letter_groups`` per key."""
    found: dict[int, datetime] = {}
    for (place_id, _, _), ((first_at, _), _) in _ends(keys).items():
        found[place_id] = min(first_at, found.get(place_id, first_at))
    return found


def _ends(keys: Iterable[tuple[int, str, str]]) -> dict[tuple[int, str, str], tuple[tuple[datetime, int], datetime]]:
    """For each (place, state, fingerprint): its first letter's (captured_at, id) and its last
    letter's captured_at, two probes at the ends of ``letter_groups``."""
    keys = list(keys)
    if not keys:
        return {}
    places, states, fingerprints = zip(*keys, strict=True)
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT k.place_id, k.state, k.fingerprint, first.captured_at, first.id, last.captured_at
                 FROM unnest(%s::bigint[], %s::text[], %s::text[]) AS k (place_id, state, fingerprint)
                 CROSS JOIN LATERAL (
                     SELECT captured_at, id FROM console_deadletter AS d
                      WHERE (d.place_id, d.state, d.fingerprint) = (k.place_id, k.state, k.fingerprint)
                      ORDER BY captured_at, id LIMIT 1) AS first
                 CROSS JOIN LATERAL (
                     SELECT captured_at FROM console_deadletter AS d
                      WHERE (d.place_id, d.state, d.fingerprint) = (k.place_id, k.state, k.fingerprint)
                      ORDER BY captured_at DESC, id DESC LIMIT 1) AS last""",
            [list(places), list(states), list(fingerprints)],
        )
        return {(place, state, fingerprint): ((first_at, first_id), last_at)
                for place, state, fingerprint, first_at, first_id, last_at in cursor.fetchall()}
