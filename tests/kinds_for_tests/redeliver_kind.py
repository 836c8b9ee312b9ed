"""Redeliver: a replay under a name and audit action of its own, living only in the tests, to
show that the pipeline reads what a kind declares (publishes to origins, resolves letters)
instead of a list of kinds: tests/pipeline/test_the_pipeline_reads_what_the_kinds_declare.py."""

from __future__ import annotations

from console.jobs.kinds.replay import Replay


class Redeliver(Replay):
    name = "redeliver"
    action_label = "Redeliver to origin"
