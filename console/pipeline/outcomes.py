"""What the pipeline reads of the job kinds, passed down by the jobs layer, which knows them
(console.jobs.kinds.replays and resolving): the pipeline sits below the jobs and names no kind.
No Spark here: the registry builds these wherever it runs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

#: (audit action, outcome) -> the letter state it leaves the letters it names in: each job kind's
#: ``resolves`` under its ``audited_as`` (the failure analytics' resolved letters).
Resolving = Mapping[tuple[str, str], str]


@dataclass(frozen=True)
class Replays:
    """The job kinds that publish letters back to their origins, and what their audit rows are
    called (``audited_as``): retention counts their jobs as the origins' activations."""

    kinds: frozenset[str]
    actions: frozenset[str]
