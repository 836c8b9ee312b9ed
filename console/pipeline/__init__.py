"""The data pipeline on Spark: archive custody to a Parquet lake, failure groups over the whole
history, retention, and replay from the archive.

Modules: ``session`` (the SparkSession), ``lake`` (paths and file operations on any
Hadoop-compatible URL), ``schema`` (the lake's datasets), ``source`` (reading PostgreSQL),
``archive``, ``groups``, ``retention``, ``replay``; ``tasks`` (Celery beat) and ``submit``
(the spark-submit entry point). Nothing here is imported by the web process at start-up.
"""
