"""Dead Letter Office: a web console for dead letters across brokers.

The Celery app (console.celery) is loaded by Django's app registry (console.apps) and found by
``celery -A console``; it is not imported here, so a broker child process
(console.brokers.child_process), which imports only the adapters, starts without it.
"""
