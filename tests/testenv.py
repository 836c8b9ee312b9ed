"""Loaded by pytest (``-p tests.testenv`` in pytest.ini) before Django reads its settings."""

import os

os.environ.setdefault("SECRET_KEY", "tests-only-secret-key")
os.environ.setdefault("DEBUG", "false")
os.environ.setdefault("SECURE_COOKIES", "false")

# The Spark JVMs the tests start (local sessions, spark-submit drivers and the Connect server,
# the standalone master and worker; tests.pipeline.cluster gives executors the same) live
# seconds to minutes: with the client compiler alone and the serial collector the Spark tests
# take a quarter less CPU on two cores, which the other workers of a parallel run want.
TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
os.environ.setdefault("SPARK_SUBMIT_OPTS", TEST_JVM_OPTIONS)
os.environ.setdefault("SPARK_DAEMON_JAVA_OPTS", TEST_JVM_OPTIONS)
