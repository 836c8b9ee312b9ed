"""Where a Spark started in the console's process writes its log: Spark's and Java's messages go
to var/log/spark.log, and the console shows only their warnings and errors, one line each
(log4j2.properties beside this module). Spark Connect and spark-submit keep their own logging.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

CONFIG = Path(__file__).with_name("log4j2.properties")


def log_file() -> Path:
    """The file Spark's and Java's log go to (its folder made if missing)."""
    path = Path(settings.BASE_DIR) / "var" / "log" / "spark.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def java_options() -> str:
    """The driver JVM's options that point log4j at our configuration and our file."""
    # Quoted: Spark splits these options as a shell would, and a folder may hold a space.
    return f'"-Dlog4j2.configurationFile={CONFIG.as_uri()}" "-Ddlo.spark.log={log_file()}"'
