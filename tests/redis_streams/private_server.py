"""A redis-server of one test's own, on a free loopback port, which the test may stop and start.

The shared Redis on 6379 must never be restarted (other tests and engineers use it). This one
keeps its data in the test's tmp folder with the append-only file on, so a clean stop and a
start again lose nothing, as on a real server configured for durability.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

import redis

START_SECONDS = 10


class PrivateRedis:
    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        """Start the server and return once it answers PING."""
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        with (self.folder / "server.log").open("a") as log:
            self.process = subprocess.Popen(
                [binary, "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(self.folder),
                 "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--protected-mode", "no"],
                stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                with redis.Redis.from_url(self.url, socket_timeout=1) as client:
                    client.ping()
                return
            except redis.RedisError:
                assert time.monotonic() < deadline, "the private redis-server did not start"
                time.sleep(0.05)

    def stop(self) -> None:
        """SIGTERM: Redis's orderly shutdown, as an operator's restart does."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(30)
        self.process = None

    def close(self) -> None:
        process = self.process
        try:
            self.stop()
        except subprocess.TimeoutExpired:
            assert process is not None
            process.kill()
            process.wait()
