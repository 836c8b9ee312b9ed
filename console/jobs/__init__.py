"""Jobs, a room per concern, in the layer order .importlinter checks (top imports bottom):

- ``tasks`` — the Celery tasks, thin shells with stable names;
- ``automation/`` — what runs without a person: the keeper, the rules at work, the beat
  schedule's periodic work; each asks the door for its jobs;
- ``door/`` — the one door (requests), approvals, the one enqueue (queueing), steering and the
  worker's runner;
- ``kinds/`` — one module per kind of job;
- ``engines/`` — what moves letters: capture, publish, shovel, local;
- ``control`` — what every job loop shares: claim, progress, pause and cancel, broker waits.

Map of the whole console: docs/architecture.md.
"""
