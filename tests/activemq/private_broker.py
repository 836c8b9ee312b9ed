"""An ActiveMQ Classic broker of one test's own, which the test may stop and start again.

The shared broker (STOMP on 61613) must never be restarted: other tests and engineers use it.
This one runs Debian's jars with a configuration written into the test's tmp folder: the same
dead-letter policy as the shared one (scripts/activemq/activemq.xml: ``indiv.*`` queues die
into ``DLQ.indiv.*``), KahaDB in the folder (kept across a stop and start, so persistent
messages live through the restart), STOMP alone on a free loopback port, and a small heap.
A start takes a JVM's boot, several seconds on these machines.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

HOME = Path("/usr/share/activemq")
START_SECONDS = 90
#: What Debian's init script gives the JVM on Java 17 (the broker's reflection needs them).
JAVA_OPTIONS = [
    "-Xms128M", "-Xmx256M", "-Djava.awt.headless=true", "--add-reads=java.xml=java.logging",
    *[part for module in ("java.base/java.security", "java.base/java.net", "java.base/java.lang",
                          "java.base/java.util", "java.naming/javax.naming.spi", "java.rmi/sun.rmi.transport.tcp",
                          "java.base/java.util.concurrent", "java.base/java.util.concurrent.atomic")
      for part in ("--add-opens", f"{module}=ALL-UNNAMED")],
]
CONFIG = """<beans xmlns="http://www.springframework.org/schema/beans"
  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
  xsi:schemaLocation="http://www.springframework.org/schema/beans http://www.springframework.org/schema/beans/spring-beans-2.0.xsd
  http://activemq.apache.org/schema/core http://activemq.apache.org/schema/core/activemq-core.xsd">
  <broker xmlns="http://activemq.apache.org/schema/core" useJmx="false" brokerName="private"
          dataDirectory="{data}" persistent="true">
    <destinationPolicy><policyMap><policyEntries>
      <policyEntry queue="indiv.>"><deadLetterStrategy>
        <individualDeadLetterStrategy queuePrefix="DLQ." useQueueForQueueMessages="true"/>
      </deadLetterStrategy></policyEntry>
    </policyEntries></policyMap></destinationPolicy>
    <persistenceAdapter><kahaDB directory="{data}/kahadb"/></persistenceAdapter>
    <transportConnectors>
      <transportConnector name="stomp" uri="stomp://127.0.0.1:{port}"/>
    </transportConnectors>
  </broker>
</beans>
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PrivateActiveMQ:
    def __init__(self, base: Path) -> None:
        assert (HOME / "bin" / "activemq.jar").exists(), f"ActiveMQ's jars are not in {HOME}"
        self.base = base
        self.port = free_port()
        (base / "conf").mkdir(parents=True, exist_ok=True)
        (base / "tmp").mkdir(exist_ok=True)
        (base / "conf" / "activemq.xml").write_text(CONFIG.format(data=base / "data", port=self.port))
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"stomp://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Start the broker and return once its STOMP port accepts connections."""
        conf = self.base / "conf"
        command = ["java", *JAVA_OPTIONS, f"-Djava.io.tmpdir={self.base / 'tmp'}",
                   f"-Dactivemq.classpath={conf}:{HOME / 'lib'}/", f"-Dactivemq.home={HOME}",
                   f"-Dactivemq.base={self.base}", f"-Dactivemq.conf={conf}", f"-Dactivemq.data={self.base / 'data'}",
                   "-jar", str(HOME / "bin" / "activemq.jar"), "start", f"xbean:file:{conf / 'activemq.xml'}"]
        with (self.base / "broker.log").open("a") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=self.base,
                                            start_new_session=True)
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    log_text = (self.base / "broker.log").read_text(errors="replace")[-3000:]
                    raise RuntimeError(f"the private ActiveMQ did not start:\n{log_text}") from None
                time.sleep(0.1)

    def stop(self) -> None:
        """SIGTERM: the broker's shutdown hook stops it in order, as a service manager does."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(60)
        self.process = None

    def close(self) -> None:
        process = self.process
        try:
            self.stop()
        except subprocess.TimeoutExpired:
            assert process is not None
            os.killpg(process.pid, signal.SIGKILL)  # the group start_new_session gave it
            process.wait()
