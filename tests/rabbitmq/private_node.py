"""A RabbitMQ node of one test's own, which the test may stop and start again at will.

The shared RabbitMQ on 5672 must never be restarted (other tests and engineers use it), so a
test about a broker outage runs this node instead: its own node name, AMQP and distribution
ports, data and log folders and Erlang cookie (HOME) under the test's tmp folder, no plugins
unless asked for (``management=True``: the management API, on a port of its own, and the
shovel), and its own config file instead of the machine's /etc/rabbitmq ones. Stopping and
starting keeps the data folder, so durable queues and persistent messages live through the
restart, as on a real broker.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import uuid
from pathlib import Path

#: The real scripts; /usr/sbin/rabbitmq-server is a wrapper that switches to the rabbitmq user.
SBIN = Path("/usr/lib/rabbitmq/bin")
START_SECONDS = 90


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PrivateRabbit:
    def __init__(self, base: Path, *, management: bool = False) -> None:
        assert (SBIN / "rabbitmq-server").exists(), f"RabbitMQ's server scripts are not in {SBIN}"
        self.base = base
        self.node = f"dlo-outage-{uuid.uuid4().hex[:8]}@localhost"
        self.port = free_port()
        base.mkdir(parents=True, exist_ok=True)
        self.management_port = free_port() if management else None
        config = f"listeners.tcp.local = 127.0.0.1:{self.port}\n"
        plugins = "[]"
        if management:
            plugins = "[rabbitmq_management,rabbitmq_shovel,rabbitmq_shovel_management]"
            config += f"management.tcp.ip = 127.0.0.1\nmanagement.tcp.port = {self.management_port}\n"
        (base / "enabled_plugins").write_text(f"{plugins}.\n")
        (base / "rabbitmq.conf").write_text(config)
        (base / "rabbitmq-env.conf").write_text("")
        self.pid_file = base / "node.pid"
        self.env = {
            **os.environ,
            "HOME": str(base),  # the Erlang cookie, shared by the node and rabbitmqctl
            "RABBITMQ_NODENAME": self.node,
            "RABBITMQ_NODE_PORT": str(self.port),
            "RABBITMQ_DIST_PORT": str(free_port()),
            "RABBITMQ_MNESIA_BASE": str(base / "mnesia"),
            "RABBITMQ_LOG_BASE": str(base / "log"),
            "RABBITMQ_PID_FILE": str(self.pid_file),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(base / "enabled_plugins"),
            "RABBITMQ_CONFIG_FILE": str(base / "rabbitmq.conf"),
            "RABBITMQ_CONF_ENV_FILE": str(base / "rabbitmq-env.conf"),
            "ERL_EPMD_ADDRESS": "127.0.0.1",
        }
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"amqp://guest:guest@127.0.0.1:{self.port}/%2F"

    @property
    def management_url(self) -> str:
        return f"http://127.0.0.1:{self.management_port}"

    def start(self) -> None:
        """Start the node and return once it accepts connections."""
        with (self.base / "server.out").open("a") as out:
            self.process = subprocess.Popen([str(SBIN / "rabbitmq-server")], env=self.env, stdout=out,
                                            stderr=subprocess.STDOUT, start_new_session=True)
        self._ctl("wait", str(self.pid_file), "--timeout", str(START_SECONDS))

    def stop(self) -> None:
        """A clean shutdown, as an operator restarting the broker (or a container runtime
        stopping it) does: SIGTERM, which the server script turns into RabbitMQ's orderly stop.
        Quicker to take effect than ``rabbitmqctl stop``, which must boot a VM first."""
        self.process.terminate()
        self.process.wait(timeout=60)
        self.pid_file.unlink(missing_ok=True)

    def close(self) -> None:
        """Whatever state it is in: gone afterwards."""
        if self.process is None or self.process.poll() is not None:
            return
        try:
            self.stop()
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)  # the group start_new_session gave it
            self.process.wait()

    def _ctl(self, *args: str) -> None:
        done = subprocess.run([str(SBIN / "rabbitmqctl"), "-n", self.node, *args], env=self.env,
                              capture_output=True, text=True, timeout=START_SECONDS + 30)
        if done.returncode != 0:
            log = (self.base / "server.out").read_text(errors="replace")[-3000:]
            raise subprocess.SubprocessError(f"rabbitmqctl {' '.join(args)} failed: {done.stdout}{done.stderr}\n"
                                             f"node output:\n{log}")
