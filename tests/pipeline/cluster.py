"""A Spark standalone cluster on loopback for the tests, started from the pyspark wheel: one
master and one worker (``spark-class org.apache.spark.deploy.master.Master`` / ``...Worker``),
and ``spark-submit`` run the way the README says (the project zipped, ``--py-files``)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

from tests.testenv import TEST_JVM_OPTIONS
from tests.workers import PROJECT, test_database_url

BIN = Path(sys.executable).parent
WAIT_SECONDS = 120


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def spark_env(folder: Path) -> dict[str, str]:
    """Everything Spark starts here binds to 127.0.0.1, logs and works inside ``folder``, and runs
    Python (should an executor need it) from this virtualenv."""
    return {
        **os.environ,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(folder / "logs"),
        "SPARK_WORKER_DIR": str(folder / "work"),
        "SPARK_DAEMON_MEMORY": "512m",
        "PYSPARK_PYTHON": sys.executable,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
    }


class StandaloneCluster:
    """``start()`` brings up the master, then a worker that registers with it; ``stop()`` ends both."""

    def __init__(self, folder: Path, cores: int = 2, memory: str = "2g") -> None:
        self.folder = folder
        self.cores, self.memory = cores, memory
        self.port, self.ui_port, self.worker_ui_port = free_port(), free_port(), free_port()
        self.env = spark_env(folder)
        self.processes: list[subprocess.Popen] = []

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def _spawn(self, name: str, *args: str) -> None:
        log = (self.folder / f"{name}.log").open("a")
        self.processes.append(subprocess.Popen([str(BIN / "spark-class"), *args], env=self.env, stdout=log,
                                               stderr=subprocess.STDOUT, cwd=self.folder))

    def start(self) -> StandaloneCluster:
        (self.folder / "work").mkdir(parents=True, exist_ok=True)
        self._spawn("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                    "--port", str(self.port), "--webui-port", str(self.ui_port))
        self._wait(lambda: self.state() is not None, "the master's web UI")
        self._spawn("worker", "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                    "--cores", str(self.cores), "--memory", self.memory, "--webui-port", str(self.worker_ui_port),
                    "--work-dir", str(self.folder / "work"), self.url)
        self._wait(lambda: (self.state() or {}).get("aliveworkers") == 1, "a worker registered with the master")
        return self

    def state(self) -> dict | None:
        """The master's own account of the cluster (its web UI's JSON), None while it is not up."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=2) as answer:
                return json.load(answer)
        except OSError:
            return None

    def _wait(self, condition, what: str) -> None:
        deadline = time.monotonic() + WAIT_SECONDS
        while not condition():
            dead = [p for p in self.processes if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"Spark standalone: no {what} ({'a process died' if dead else 'timed out'}); "
                                   f"logs:\n{self.logs()}")
            time.sleep(0.5)

    def logs(self) -> str:
        return "\n".join(f"--- {log.name}\n{log.read_text(errors='replace')[-3000:]}"
                         for log in sorted(self.folder.glob("*.log")))

    def stop(self) -> None:
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
        self.processes.clear()


def project_zip(folder: Path) -> Path:
    """``zip -qr dlo.zip console``: the project's package, as the README has it made."""
    target = folder / "dlo.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted((PROJECT / "console").rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                archive.write(path, path.relative_to(PROJECT))
    return target


def spark_submit(cluster: StandaloneCluster, package: Path, *job: str, log: Path) -> str:
    """``spark-submit --master spark://... --py-files dlo.zip console/pipeline/submit.py <job>``
    from the project's folder, against the test database; returns what the job printed."""
    env = {**cluster.env, "DATABASE_URL": test_database_url(), "DJANGO_SETTINGS_MODULE": "console.settings"}
    done = subprocess.run(
        [str(BIN / "spark-submit"), "--master", cluster.url, "--py-files", str(package),
         "--conf", f"spark.executor.extraJavaOptions={TEST_JVM_OPTIONS}", "console/pipeline/submit.py", *job],
        cwd=PROJECT, env=env, capture_output=True, text=True, timeout=600,
    )
    with log.open("a") as out:
        out.write(f"===== spark-submit {' '.join(job)}: exit {done.returncode}\n{done.stdout}\n{done.stderr}\n")
    if done.returncode != 0:
        raise AssertionError(f"spark-submit {' '.join(job)} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return done.stdout


class ConnectServer:
    """A Spark Connect server (``org.apache.spark.sql.connect.service.SparkConnectServer``, in the
    wheel's jars) on 127.0.0.1, its own Spark ``local[2]``; clients reach it at ``url``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"sc://127.0.0.1:{self.port}"

    def start(self) -> ConnectServer:
        self.folder.mkdir(parents=True, exist_ok=True)
        log = (self.folder / "connect.log").open("a")
        self.process = subprocess.Popen(
            [str(BIN / "spark-submit"), "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
             "--name", "dlo-tests-connect", "--master", "local[2]", "--driver-memory", "1g",
             "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
             "--conf", f"spark.connect.grpc.binding.port={self.port}", "--conf", "spark.ui.enabled=false",
             "spark-internal"],
            env=spark_env(self.folder), stdout=log, stderr=subprocess.STDOUT, cwd=self.folder)
        deadline = time.monotonic() + WAIT_SECONDS
        while "Spark Connect server started" not in (self.folder / "connect.log").read_text(errors="replace"):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"Spark Connect server did not start:\n{self.log()}")
            time.sleep(0.5)
        return self

    def log(self) -> str:
        return (self.folder / "connect.log").read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()


def java_processes_under(pid: int) -> list[int]:
    """Java processes that descend from ``pid`` (a JVM it started, directly or not)."""
    parents, java = {}, set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)
            parents[int(entry)] = int(fields[1].split()[1])
            if os.path.basename(os.readlink(f"/proc/{entry}/exe")) == "java":
                java.add(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    found = []
    for candidate in java:
        ancestor = parents.get(candidate)
        while ancestor and ancestor != pid:
            ancestor = parents.get(ancestor)
        if ancestor == pid:
            found.append(candidate)
    return found
