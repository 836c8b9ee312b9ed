"""The kept-place crash scenario, one piece of code for every broker kind (issue 35).

Hundreds of places are kept; each round, numbered letters die into them (spread over all of
them), a keeper (``manage.py keep``) is started and killed with SIGKILL at a random moment:
before its first look, in the middle of a take, or once it is idle. At the middle kill the
broker itself is stopped and started again under the running keeper. Then a last keeper is
left to finish, and the test checks what a user would check afterwards:

- every letter is in custody exactly once (by its body, which names its number), none lost;
- each is audited as stored once;
- none is left waiting for its acknowledgement, and nothing is left on the broker;
- each place got one keep job, and the jobs' done counts add up to the letters sent.

What differs per broker (making the places, making letters die, restarting the broker, how
deep a place is) is a ``CrashSite`` that each broker's test module provides; the kills, the
restart at the middle and the checks are the same for all.

DLO_CRASH_SEED reproduces a failing run's order of moments and delays.
"""

from __future__ import annotations

import os
import random
import time
from collections import Counter
from collections.abc import Sequence
from typing import Protocol

from console.models import AuditEvent, DeadLetter, DeadPlace, Job
from tests.flow import keep
from tests.workers import Keeper

KILLS = 10
#: When each kill comes, in a shuffled order: ``early``, a random 0.2-1.5 s after the keeper
#: started (before or at its first look); ``mid``, a random 0-0.5 s after the first letters of
#: the round reached custody (in the middle of its takes, or between a commit and its
#: acknowledgement); ``idle``, a random 0-1 s after the round's letters were all in custody.
#: Moments follow the keeper's progress, not the clock, so they land where meant on a slow
#: machine and on a fast keeper alike.
MOMENTS = ("early",) * 3 + ("mid",) * 4 + ("idle",) * 3
#: The longest wait for a round's first letters, or all of them, to reach custody.
ROUND_SECONDS = 120
#: How long the last keeper may take to bring every letter in.
SETTLE_SECONDS = 180


def body_of(number: int) -> bytes:
    """The body of letter ``number``: it names its number, so custody can be checked by body
    on every broker (message ids are the broker's own on some)."""
    return f"letter-{number:07d}".encode()


def place_of(number: int, places: int) -> int:
    """Which place letter ``number`` dies into: round robin, so every place gets letters."""
    return number % places


class CrashSite(Protocol):
    """The broker-specific part of the scenario."""

    #: False where the broker cannot be restarted in a test (the module says why).
    can_restart: bool

    def make_places(self, count: int) -> list[DeadPlace]:
        """``count`` dead places on a broker of the test's own, known to the console (not yet kept)."""

    def let_die(self, first: int, count: int) -> None:
        """Letters ``first`` .. ``first + count - 1`` die the way they do in production, letter
        ``n`` (body ``body_of(n)``) into place ``place_of(n, places)``; returns once they are
        all in their places."""

    def restart_broker(self) -> None:
        """Stop the broker and start it again; persistent letters live through it."""

    def depths(self, places: Sequence[DeadPlace]) -> int:
        """Letters still on the broker in these places."""

    def after_kill(self) -> None:
        """Wait until the broker no longer counts the killed keeper as a reader, where it can tell."""


def survives_kills_and_a_restart(site: CrashSite, keeper: Keeper, operator, *, places: int, per_place: int,
                                 kills: int = KILLS) -> list[str]:
    """Run the scenario; fails with the history and the keeper's log. Returns the history."""
    seed = int(os.environ.get("DLO_CRASH_SEED") or random.randrange(2**32))
    chance = random.Random(seed)
    started = time.monotonic()
    kept = [keep(place, operator) for place in site.make_places(places)]
    history = [f"{places} places kept in {time.monotonic() - started:.1f}s"]
    sent = 0

    def in_custody() -> int:
        return DeadLetter.objects.filter(place__in=kept).count()

    def explain(problem: str) -> str:
        jobs = Job.objects.filter(kind="keep", place__in=kept)
        lines = "\n".join(f"  job {j.pk} {j.status} done={j.done} error={j.error!r}" for j in jobs[:20])
        return (f"{problem} (seed {seed}; DLO_CRASH_SEED reproduces it)\n" + "\n".join(history)
                + f"\n{jobs.count()} keep jobs, the first:\n{lines}\nkeeper log:\n{keeper.log(6000)}")

    moments = list(MOMENTS[:kills]) + ["mid"] * (kills - len(MOMENTS))
    chance.shuffle(moments)
    for kill, moment in enumerate(moments, start=1):
        round_started = time.monotonic()
        before = sent
        site.let_die(sent, places * per_place)
        sent += places * per_place
        dying = time.monotonic() - round_started
        keeper.start()
        started_at = time.monotonic()
        if kill == kills // 2 and site.can_restart:  # the broker goes away under a running keeper
            time.sleep(1.5)
            down = time.monotonic()
            site.restart_broker()
            history.append(f"broker restarted in {time.monotonic() - down:.1f}s with {in_custody()} of {sent} "
                           "letters in custody")
        if moment == "early":
            delay = chance.uniform(0.2, 1.5)
        else:
            goal = before + 1 if moment == "mid" else sent
            while in_custody() < goal:
                assert time.monotonic() - started_at < ROUND_SECONDS, \
                    explain(f"the keeper made no progress for the {moment} kill")
                time.sleep(0.05)
            delay = chance.uniform(0, 0.5 if moment == "mid" else 1.0)
        time.sleep(delay)
        keeper.kill()
        at = time.monotonic() - started_at
        site.after_kill()
        history.append(f"kill {kill} ({moment}): {at:.2f}s after the start, {in_custody()} of {sent} in custody "
                       f"({dying:.1f}s to make the round's letters die)")

    keeper.start()
    finishing = time.monotonic()
    while in_custody() < sent or site.depths(kept):
        assert time.monotonic() - finishing < SETTLE_SECONDS, explain("the letters never all reached custody")
        time.sleep(0.5)
    # A letter in custody may still wait for its acknowledgement (committed, then acked): a
    # keeper left running settles them all.
    while DeadLetter.objects.filter(place__in=kept, pending_ack__isnull=False).exists():
        assert time.monotonic() - finishing < SETTLE_SECONDS, explain(
            f"{DeadLetter.objects.filter(place__in=kept, pending_ack__isnull=False).count()} letters in custody "
            f"were never acknowledged")
        time.sleep(0.5)
    keeper.stop()
    history.append(f"the last keeper brought the rest in within {time.monotonic() - finishing:.1f}s; "
                   f"{time.monotonic() - started:.0f}s in all")

    bodies = Counter(bytes(body) for body in DeadLetter.objects.filter(place__in=kept).values_list("body", flat=True))
    twice = sorted(body for body, count in bodies.items() if count > 1)
    assert not twice, explain(f"{len(twice)} letters stored more than once, e.g. {twice[:5]}")
    missing = sorted({body_of(n) for n in range(sent)} - set(bodies))
    assert not missing, explain(f"{len(missing)} letters lost, e.g. {missing[:5]}")
    strangers = sorted(set(bodies) - {body_of(n) for n in range(sent)})
    assert not strangers, explain(f"letters in custody that never died: {strangers[:5]}")
    assert not DeadLetter.objects.filter(place__in=kept, pending_ack__isnull=False).exists(), \
        explain("letters never acknowledged")
    assert site.depths(kept) == 0, explain("letters left on the broker")
    letters = set(DeadLetter.objects.filter(place__in=kept).values_list("id", flat=True))
    audited = Counter(i for ids in AuditEvent.objects.filter(action="capture").values_list("letter_ids", flat=True)
                      for i in ids if i in letters)
    assert set(audited) == letters, explain(f"{len(letters - set(audited))} letters have no audit row")
    assert max(audited.values()) == 1, explain("a letter was audited as stored twice")
    jobs = Counter(Job.objects.filter(kind="keep", place__in=kept).values_list("place_id", flat=True))
    assert sorted(jobs) == sorted(p.pk for p in kept) and max(jobs.values()) == 1, \
        explain("a place has no keep job, or more than one")
    done = sum(Job.objects.filter(kind="keep", place__in=kept).values_list("done", flat=True))
    assert done == sent, explain(f"the keep jobs' counts add up to {done}, not {sent}")
    print("\n".join(history))
    return history
