"""The data pipeline on Spark: archive custody to a Parquet lake, failure groups over the whole
history, retention, and replay from the archive.

Modules: ``session`` (the SparkSession), ``lake`` (paths and file operations on any
Hadoop-compatible URL), ``schema`` (the lake's datasets), ``source`` (reading PostgreSQL),
``archive``, ``groups``, ``analytics``, ``retention``, ``replay``; ``outcomes`` (what the jobs
layer tells the pipeline of its kinds) and ``submit`` (the spark-submit entry point). Celery
beat runs the pipeline through console.jobs.tasks, which passes the kinds' declarations down.
Nothing here is imported by the web process at start-up.
"""
