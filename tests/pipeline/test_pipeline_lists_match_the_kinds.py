"""The pipeline sits below the jobs layer, so it cannot read the kind registry: retention's
replays and the analytics' resolving audit rows are named in the pipeline. These tests hold
them to what the kinds declare (console.jobs.kinds: publishes_to, audited_as, resolves), so a
kind that publishes to origins or resolves letters cannot be added without them."""

from __future__ import annotations

from console.jobs.kinds import all_kinds
from console.jobs.kinds.base import ORIGIN
from console.pipeline.analytics import RESOLVING
from console.pipeline.retention import REPLAY_ACTIONS, REPLAY_KINDS


def test_retention_counts_as_activations_the_kinds_that_publish_to_origins():
    to_origins = [each for each in all_kinds() if each.publishes_to == ORIGIN]
    assert set(REPLAY_KINDS) == {each.name for each in to_origins}
    assert set(REPLAY_ACTIONS) == {each.audited_as for each in to_origins}


def test_analytics_resolve_letters_as_the_kinds_say():
    declared = {(each.audited_as, each.resolves[0]): each.resolves[1] for each in all_kinds() if each.resolves}
    assert RESOLVING == declared
