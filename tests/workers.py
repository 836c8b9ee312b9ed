"""Real ``celery -A console worker`` processes for the tests, on the test database; and
the capture reader processes a job starts (``readers_of``).

The worker takes its tasks from kombu's filesystem transport in a folder of the test's own
(the ``filesystem_transport`` fixture points this process's Celery app at the same folder),
so a job queued by a service on commit reaches it exactly as in production.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

from django.conf import settings

PROJECT = Path(__file__).resolve().parent.parent


def readers_of(pid: int) -> list[int]:
    """The capture reader processes (console.brokers.capture_process) that ``pid`` started."""
    from console.brokers import capture_process

    return children_running(pid, capture_process.NAME)


def publishers_of(pid: int) -> list[int]:
    """The replay publisher processes (console.brokers.publish_process) that ``pid`` started."""
    from console.brokers import publish_process

    return children_running(pid, publish_process.NAME)


def spares_of(pid: int) -> list[int]:
    """The broker children ``pid`` started ahead, not yet given work (console.brokers.child_process)."""
    from console.brokers import child_process

    return children_running(pid, child_process.SPARE_NAME)


def children_running(pid: int, name: str) -> list[int]:
    """The processes ``pid`` started that call themselves ``name`` (``/proc/<pid>/comm``)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat, open(f"/proc/{entry}/comm") as comm:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
                called = comm.read().strip()
        except (OSError, IndexError, ValueError):
            continue
        if parent == pid and called == name:
            found.append(int(entry))
    return found


def test_database_url() -> str:
    """The URL of the test database pytest-django created (its NAME is test_<name>)."""
    db = settings.DATABASES["default"]
    credentials = quote(db.get("USER") or "", safe="") + ":" + quote(db.get("PASSWORD") or "", safe="")
    # The embedded server listens on a socket folder, which dj-database-url puts in OPTIONS.
    host = db.get("HOST") or db.get("OPTIONS", {}).get("host") or ""
    if host.startswith("/"):
        return f"postgres://{credentials}@/{db['NAME']}?host={quote(host, safe='/')}"
    return f"postgres://{credentials}@{host or 'localhost'}:{db.get('PORT') or 5432}/{db['NAME']}"


# pytest would collect a module-level function named test_*.
test_database_url.__test__ = False  # type: ignore[attr-defined]


class Worker:
    """One worker process at a time; ``kill`` is SIGKILL (no warm shutdown, nothing flushed),
    ``start`` again brings up a fresh one on the same folder and database. Every process
    appends to one log file, so a failure message can show what each of them said."""

    #: What the process runs (a keeper is started the same way: tests.workers.keeper).
    command = ["-m", "celery", "-A", "console", "worker", "-l", "info", "--pool", "solo",
               "--without-gossip", "--without-mingle", "--without-heartbeat"]

    def __init__(self, folder: Path, log_path: Path, **env: str) -> None:
        self.folder = folder
        self.log_path = log_path
        self.env = {
            **os.environ,
            "DATABASE_URL": test_database_url(),
            "CELERY_BROKER_URL": "filesystem://",
            "CELERY_FILESYSTEM_DIR": str(folder),
            "DJANGO_SETTINGS_MODULE": "console.settings",
            **env,
        }
        self.process: subprocess.Popen | None = None
        self.starts = 0

    def start(self) -> subprocess.Popen:
        assert self.process is None or self.process.poll() is not None, "a worker is running already"
        self.starts += 1
        with self.log_path.open("a") as log:
            log.write(f"\n===== {type(self).__name__.lower()} start {self.starts} =====\n")
            log.flush()
            self.process = subprocess.Popen([sys.executable, *self.command], cwd=PROJECT, env=self.env, stdout=log,
                                            stderr=subprocess.STDOUT)
        return self.process

    def kill(self) -> None:
        """SIGKILL, as the kernel's OOM killer or a pulled plug would end it."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        """SIGTERM: a keeper stores and acknowledges the batches in hand, then exits."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(30)

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log(self, tail: int = 4000) -> str:
        return self.log_path.read_text(errors="replace")[-tail:] if self.log_path.exists() else ""


class JobWatch:
    """Bounded waits on a job that a Worker runs, and failure messages that show what the job
    and the worker said."""

    def __init__(self, worker: Worker, wait_seconds: float = 90) -> None:
        self.worker = worker
        self.wait_seconds = wait_seconds

    def wait(self, job, condition, what: str) -> None:
        """Poll the job's row until ``condition()`` holds (it sees the refreshed ``job``)."""
        deadline = time.monotonic() + self.wait_seconds
        while True:
            job.refresh_from_db()
            if condition():
                return
            if time.monotonic() > deadline:
                raise AssertionError(self.explain(job, f"waited {self.wait_seconds}s for {what}"))
            time.sleep(0.05)

    def finish(self, job):
        """Let the job run to its end in a live worker."""
        if not self.worker.alive():
            self.worker.start()
        self.wait(job, lambda: job.is_finished, "the job to end")
        return job

    def explain(self, job, problem: str) -> str:
        job.refresh_from_db()
        lines = "\n".join(f"  {line['at']} {line['message']}" for line in job.log)
        return (f"{problem}; job {job.pk} {job.status} done={job.done} failed={job.failed} error={job.error!r}\n"
                f"job log:\n{lines}\nworker log:\n{self.worker.log()}")


class Keeper(Worker):
    """A ``manage.py keep`` process (console.jobs.automation.keeper), looking at its places every 0.2 s."""

    command = ["manage.py", "keep", "--poll", "0.2"]
