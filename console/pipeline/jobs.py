"""The job runner's door into the pipeline: imports Spark only when such a job runs."""

from __future__ import annotations


def run_archive_replay(job) -> str:
    from console.pipeline.replay import run_archive_replay as run

    return run(job)
