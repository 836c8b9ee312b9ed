"""spark-submit entry point: set up Django, then run one pipeline job like ``manage.py pipeline``.

    spark-submit --master spark://host:7077 --py-files dlo.zip console/pipeline/submit.py \
        archive --lake s3a://bucket/lake

The driver needs the project (``--py-files`` with a zip of it, or the checkout on its path),
its Python dependencies, and the console's environment (DATABASE_URL, SECRET_KEY, ...).
The session spark-submit made is the one the job uses.
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str]) -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    project = os.path.dirname(os.path.dirname(here))
    if os.path.exists(os.path.join(project, "manage.py")) and project not in sys.path:
        sys.path.insert(0, project)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("pipeline", *argv)


if __name__ == "__main__":
    main(sys.argv[1:])
