"""The README's pictures, made from the demo in Chromium, so they show the console as it is.

    scripts/screenshots [--database-url postgres://postgres@127.0.0.1:5432/dlo_screenshots]

Starts a console of its own in this process: a fresh database (dropped and made again: its
name must end in ``screenshots``), the demo on RabbitMQ in a virtual host of its own
(``dlo-screenshots``, made again, with a user who sees only it; the memory broker when
RabbitMQ's management API does not answer, and then no replay), the pipeline's analytics once
(when Java 17 is there), and a web server on a free port. Jobs run in a thread of this process
instead of a Celery worker. Then Chromium (/usr/bin/chromium, 1280x800) signs in as ``demo``,
walks the README's first ten minutes and keeps what it sees,
writing docs/screenshots/{inventory,place,letter,job-replayed,rules,analytics}.png.
"""

import argparse
import base64
import json
import os
import sys
import threading
import urllib.error
import urllib.request
from io import StringIO
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
VIEWPORT = {"width": 1280, "height": 800}
VHOST = USER = "dlo-screenshots"


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/dlo_screenshots")
    parser.add_argument("--rabbitmq", default="127.0.0.1:5672", help="host:port of RabbitMQ (guest/guest)")
    parser.add_argument("--management", default="http://127.0.0.1:15672", help="RabbitMQ's management API")
    parser.add_argument("--out", type=Path, default=OUT)
    return parser.parse_args()


def _fresh_database(url: str) -> None:
    import psycopg

    name = urlsplit(url).path.lstrip("/")
    if not name.endswith("screenshots"):
        sys.exit(f"the database is dropped and made again: its name must end in 'screenshots', not {name!r}")
    server = urlunsplit(urlsplit(url)._replace(path="/postgres"))
    with psycopg.connect(server, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')


def _fresh_vhost(management: str) -> bool:
    """Make the demo's virtual host again (empty); False when RabbitMQ's management API does not answer."""
    auth = "Basic " + base64.b64encode(b"guest:guest").decode()

    def call(method: str, path: str, body: dict | None = None) -> None:
        request = urllib.request.Request(management.rstrip("/") + path, method=method,
                                         data=json.dumps(body).encode() if body is not None else None,
                                         headers={"Authorization": auth, "Content-Type": "application/json"})
        try:
            urllib.request.urlopen(request, timeout=10).close()
        except urllib.error.HTTPError as exc:
            if not (method == "DELETE" and exc.code == 404):
                raise

    try:
        call("DELETE", f"/api/vhosts/{quote(VHOST)}")
    except OSError:
        return False
    call("PUT", f"/api/vhosts/{quote(VHOST)}", {})
    # A user who sees only this vhost, so discovery finds the demo's queues and no one else's.
    call("PUT", f"/api/users/{USER}", {"password": USER, "tags": "policymaker"})
    call("PUT", f"/api/permissions/{quote(VHOST)}/{USER}", {"configure": ".*", "write": ".*", "read": ".*"})
    return True


def _console(args: argparse.Namespace, rabbitmq: bool) -> str:
    """Django set up on the fresh database with the demo loaded; the URL of a server on a free port."""
    os.environ.update(DATABASE_URL=args.database_url, DEBUG="true", CELERY_BROKER_URL="memory://",
                      DJANGO_SETTINGS_MODULE="console.settings", DJANGO_ALLOW_ASYNC_UNSAFE="true")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.core.management import call_command
    from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
    from django.core.wsgi import get_wsgi_application

    from console.jobs import tasks
    from console.jobs.door.runner import run_job

    call_command("migrate", verbosity=0)
    demo = ["demo", "--analytics"]
    if rabbitmq:
        management = urlsplit(args.management)
        demo += ["--rabbitmq-url", f"amqp://{USER}:{USER}@{args.rabbitmq}/{VHOST}", "--management-url",
                 urlunsplit(management._replace(netloc=f"{USER}:{USER}@{management.netloc}", path="/"))]
    else:
        demo.append("--no-rabbitmq")
    said = StringIO()
    call_command(*demo, stdout=said)
    print(said.getvalue().rstrip())
    # No Celery worker: from now on (the demo runs its captures itself) a job the pages ask for
    # runs in a thread of this process.
    tasks.run_job.delay = lambda job_id: threading.Thread(target=run_job, args=(job_id,), daemon=True).start()

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args) -> None:
            pass

    server = ThreadedWSGIServer(("127.0.0.1", 0), Quiet)
    server.set_app(StaticFilesHandler(get_wsgi_application()))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_port}"


def _pictures(url: str, out: Path, replay: bool) -> list[Path]:
    from playwright.sync_api import expect, sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    made: list[Path] = []

    def shoot(page, name: str) -> None:
        path = out / f"{name}.png"
        page.screenshot(path=str(path))
        made.append(path)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox"])
        page = browser.new_context(base_url=url, viewport=VIEWPORT).new_page()
        page.set_default_timeout(30_000)
        page.goto("/sign-in/")
        page.get_by_label("Username").fill("demo")
        page.get_by_label("Password").fill("dead-letters-demo")
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("link", name="Inventory")).to_be_visible()
        shoot(page, "inventory")

        page.get_by_role("link", name="demo.billing.dlq").first.click()
        shoot(page, "place")
        page.locator("table a[href*='/letters/']").first.click()
        expect(page.locator("#letter-actions")).to_be_visible()
        shoot(page, "letter")

        if replay:
            actions = page.locator("#letter-actions")
            actions.get_by_label("Action").select_option("replay")
            actions.get_by_label("Reason (for the audit)").fill("fixed the currency table")
            actions.get_by_role("button", name="Preview…").click()
            page.get_by_role("button", name="Replay to origin: 1 letter").click()
            expect(page.locator("[data-status]")).to_have_text("Succeeded")
            shoot(page, "job-replayed")

        page.goto("/rules/")
        form = page.get_by_role("form", name="New rule")
        form.get_by_label("Name").fill("declined payments")
        form.get_by_label("Match (JSON)").fill('{"exception_type": "PaymentDeclinedException$"}')
        form.get_by_label("Action").select_option("retry")
        form.get_by_label("Ladder", exact=True).fill("60x3, 600x2")
        form.get_by_label("Then").select_option("mark_failed")
        form.get_by_label("Reason (for the audit)").fill("declines often clear up")
        form.get_by_role("button", name="Save as draft").click()
        page.get_by_role("button", name="Dry run").first.click()
        page.wait_for_load_state("networkidle")
        shoot(page, "rules")

        page.goto("/analytics/")
        shoot(page, "analytics")
        browser.close()
    return made


def main() -> None:
    args = _arguments()
    _fresh_database(args.database_url)
    rabbitmq = _fresh_vhost(args.management)
    if not rabbitmq:
        print("RabbitMQ's management API does not answer: the demo on the memory broker, without the replay")
    url = _console(args, rabbitmq)
    for path in _pictures(url, args.out, replay=rabbitmq):
        print(f"{path}  {path.stat().st_size // 1024} KiB")


if __name__ == "__main__":
    main()
