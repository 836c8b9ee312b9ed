"""The console while its identity provider is away (issue 45): concurrent clients against the
console as Gunicorn serves it (two sync workers, as ``make run``), first with the tests' real
OpenID provider up, then with it away, in the same run.

Half the clients call the API with the provider's access tokens (bearer): a token signed by the
key the console has read, and one naming a key it has not seen (a rotation it missed), in turn.
The other half fetch the letters page as a password user. ``--away silent`` (the default) puts a
listener on the provider's port that accepts connections and never answers, the worst case (a
hung provider, a firewall that drops); ``--away refused`` leaves the port closed.

Printed: 50 requests of each kind one at a time (each one's status and the slowest time), then
per phase and kind with all the clients at once: requests answered, their statuses, p50 and p99
latency, and the away phase's p99 against the up phase's. The away phase starts once the outage
has lasted past the key set's read cooldown (30 s), when an unseen key makes the console ask.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/dlo_bench_provider \\
        .venv/bin/python benchmarks/provider_outage.py [--clients 20] [--seconds 60] [--away silent]

Needs Node.js and the provider's packages (``scripts/bootstrap``).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from contextlib import ExitStack
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
ONE_BY_ONE = 50

from benchmarks import harness  # noqa: E402 - sets the environment Django reads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--away", choices=("silent", "refused"), default="silent")
    options = parser.parse_args()

    harness.setup_django("dlo_bench_provider")
    from django.contrib.auth import get_user_model

    from console.access.roles import VIEWER, set_role
    from console.models import ClaimMapping
    from console.services.claim_mappings import do_set_mapping
    from tests.identity_provider import free_port, running_provider

    place = harness.seeded_place("provider-outage", 200, samples=False)
    if not ClaimMapping.objects.filter(group="bench-team").exists():
        do_set_mapping(actor="benchmark", group="bench-team", role="viewer", places=[place])
    users = get_user_model()
    reader = users.objects.filter(username="bench-reader").first() or users.objects.create_user(
        "bench-reader", password="bench-reader-pass")
    set_role(reader, VIEWER)

    provider_port, web_port = free_port(), free_port()
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        site = running_provider(folder / "provider", provider_port)
        idp = site.__enter__()
        idp.set_script_groups(["bench-team"])
        known = idp.client_credentials_token()
        import jwt

        unknown = idp.sign(jwt.decode(known, options={"verify_signature": False}), kid="rotated-unseen")
        web = _gunicorn(web_port, idp, folder / "gunicorn.log")
        stack.callback(_stop, web)
        base = f"http://127.0.0.1:{web_port}"
        _wait_for(base)
        sessions = [_signed_in(base) for _ in range(options.clients - options.clients // 2)]
        stack.callback(lambda: [s.close() for s in sessions])

        print(f"{options.clients} clients, {options.seconds:.0f} s a phase, Gunicorn with 2 workers; "
              f"provider away: {options.away}")
        one_by_one = {"provider up": _one_by_one(base, known, unknown, sessions[0])}
        up = _phase(base, options.clients, options.seconds, known, unknown, sessions)
        site.__exit__(None, None, None)
        if options.away == "silent":
            stack.enter_context(_silent(provider_port))
        # An unseen key within the cooldown after a read of the key set is refused (401) without
        # asking the provider; past it, the console asks, finds the provider away, and says 503.
        from console.security import provider as provider_state

        wait = provider_state.REFETCH_COOLDOWN_SECONDS + 1
        print(f"provider stopped; waiting {wait:.0f} s, past the key set's read cooldown", flush=True)
        time.sleep(wait)
        one_by_one["provider away"] = _one_by_one(base, known, unknown, sessions[0])
        away = _phase(base, options.clients, options.seconds, known, unknown, sessions)
    _report_one_by_one(one_by_one)
    _report({"provider up": up, "provider away": away})


def _one_by_one(base: str, known: str, unknown: str, session: httpx.Client) -> dict[str, list[tuple[int, float]]]:
    """50 requests of each kind, one at a time (after one to let the console notice the provider
    is away): each one's status and time, with no queue in front of it."""
    results: dict[str, list[tuple[int, float]]] = defaultdict(list)
    with httpx.Client(base_url=base, timeout=60) as api:
        api.get("/api/letters/?page_size=10", headers={"Authorization": f"Bearer {unknown}"})
        for kind, token in (("bearer, known key", known), ("bearer, unseen key", unknown)):
            for _ in range(ONE_BY_ONE):
                started = time.perf_counter()
                status = api.get("/api/letters/?page_size=10", headers={"Authorization": f"Bearer {token}"}
                                 ).status_code
                results[kind].append((status, time.perf_counter() - started))
    for _ in range(ONE_BY_ONE):
        started = time.perf_counter()
        status = session.get("/letters/").status_code
        results["page"].append((status, time.perf_counter() - started))
    return results


def _report_one_by_one(phases: dict[str, dict[str, list[tuple[int, float]]]]) -> None:
    print(f"one at a time, {ONE_BY_ONE} each:")
    for phase, results in phases.items():
        for kind, rows in results.items():
            statuses = ", ".join(f"{s}: {n}" for s, n in sorted(Counter(s for s, _ in rows).items()))
            times = sorted(t * 1000 for _, t in rows)
            print(f"  {phase:15} {kind:20} {statuses:22} slowest {times[-1]:7.1f} ms, next {times[-2]:7.1f} ms, "
                  f"median {times[len(times) // 2]:6.1f} ms")


def _gunicorn(port: int, idp, log: Path) -> subprocess.Popen:
    env = dict(os.environ, DLO_OIDC_ISSUER=idp.issuer, DLO_OIDC_API_AUDIENCE=idp.api_audience,
               DLO_OIDC_CLIENT_ID=idp.console.client_id, DLO_OIDC_CLIENT_SECRET=idp.console.client_secret,
               ALLOWED_HOSTS="127.0.0.1", SECURE_COOKIES="false", DEBUG="false", LOG_LEVEL="ERROR",
               CELERY_BROKER_URL="memory://")
    return subprocess.Popen([str(ROOT / ".venv/bin/gunicorn"), "console.wsgi", "--bind", f"127.0.0.1:{port}",
                             "--workers", "2", "--timeout", "120", "--log-level", "warning"],
                            cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)


def _stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()


def _wait_for(base: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(base + "/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    sys.exit("the console did not start")


def _signed_in(base: str) -> httpx.Client:
    client = httpx.Client(base_url=base, timeout=60)
    client.get("/sign-in/")
    answer = client.post("/sign-in/", data={"username": "bench-reader", "password": "bench-reader-pass",
                                            "csrfmiddlewaretoken": client.cookies["csrftoken"]},
                         headers={"Referer": base + "/sign-in/"})
    if answer.status_code != 302:
        sys.exit(f"the password sign-in failed: {answer.status_code}")
    return client


class _silent:
    """A listener that takes connections and never answers, on the provider's port."""

    def __init__(self, port: int) -> None:
        self.port, self.held, self.stopping = port, [], threading.Event()

    def __enter__(self):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", self.port))
        self.sock.listen(128)
        self.sock.settimeout(0.2)
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                self.held.append(self.sock.accept()[0])
            except OSError:
                continue

    def __exit__(self, *exc) -> None:
        self.stopping.set()
        for held in self.held:
            held.close()
        self.sock.close()


def _phase(base: str, clients: int, seconds: float, known: str, unknown: str,
           sessions: list[httpx.Client]) -> dict[str, list[tuple[int, float]]]:
    """Every request of the phase: kind -> [(status, seconds)]."""
    results: dict[str, list[tuple[int, float]]] = defaultdict(list)
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def bearer(n: int) -> None:
        with httpx.Client(base_url=base, timeout=60) as api:
            turn = n
            while time.monotonic() < deadline:
                token, kind = (known, "bearer, known key") if turn % 2 == 0 else (unknown, "bearer, unseen key")
                turn += 1
                started = time.perf_counter()
                try:
                    status = api.get("/api/letters/?page_size=10", headers={"Authorization": f"Bearer {token}"}
                                     ).status_code
                except httpx.HTTPError:
                    status = 0
                with lock:
                    results[kind].append((status, time.perf_counter() - started))

    def pages(session: httpx.Client) -> None:
        while time.monotonic() < deadline:
            started = time.perf_counter()
            try:
                status = session.get("/letters/").status_code
            except httpx.HTTPError:
                status = 0
            with lock:
                results["page"].append((status, time.perf_counter() - started))

    threads = [threading.Thread(target=bearer, args=(n,)) for n in range(clients // 2)]
    threads += [threading.Thread(target=pages, args=(session,)) for session in sessions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def _report(phases: dict[str, dict[str, list[tuple[int, float]]]]) -> None:
    p99 = {}
    print(f"{'phase':15} {'kind':20} {'answered':>9} {'statuses':30} {'p50 ms':>8} {'p99 ms':>8}")
    for phase, results in phases.items():
        for kind in ("bearer, known key", "bearer, unseen key", "page"):
            rows = results.get(kind, [])
            times = [seconds * 1000 for _, seconds in rows]
            statuses = ", ".join(f"{status}: {count}" for status, count in sorted(Counter(s for s, _ in rows).items()))
            p99[(phase, kind)] = harness.percentile(times, 99) if times else float("nan")
            print(f"{phase:15} {kind:20} {len(rows):9} {statuses:30} "
                  f"{harness.percentile(times, 50) if times else float('nan'):8.1f} {p99[(phase, kind)]:8.1f}")
    for kind in ("bearer, known key", "bearer, unseen key", "page"):
        print(f"p99 away / up, {kind}: {p99[('provider away', kind)] / p99[('provider up', kind)]:.2f}x")


if __name__ == "__main__":
    main()
