"""A canary replay: the first letters go out, the job watches the dead place for the ones that
come back (they carry our replay id), and goes on only if few did. Against the real RabbitMQ,
with a consumer that really rejects."""

from __future__ import annotations

import pytest

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.jobs.door.steering import do_resume_job
from console.jobs.engines import returns
from console.models import AuditEvent, DeadLetter, Job, LetterState
from tests.rabbitmq.standing_consumer import ACK, REJECT, StandingConsumer

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db(transaction=True)]

LETTERS = 40


def _orders(count: int) -> list[tuple[bytes, dict]]:
    return [(f'{{"order": {n}}}'.encode(), {"n": n}) for n in range(count)]


def test_a_canary_that_comes_back_pauses_the_job_and_a_good_one_lets_it_finish(captured, kit, operator):
    work, place, letters = captured("canary", _orders(LETTERS))
    job = request_job("replay", actor=operator, reason="INC-7 fixed?", filter={"place": str(place.pk)},
                    # 3 s, then 8 s, missed returns on a busy CI (four test processes on two cores,
                    # this one's consumer thread beside the job's): the returns' speed is not what is tested.
                    canary_size=5, canary_wait_seconds=20, return_threshold=20)

    with StandingConsumer(kit, work, lambda message: REJECT) as still_broken:
        assert run_job(job.pk) == Job.Status.PAUSED
    job.refresh_from_db()
    # The five canaries went out, died again, and were captured back as their children.
    assert (job.done, job.returned, still_broken.rejected) == (5, 5, 5)
    assert "canary: 5 of 5 letters came back within 20s" in job.pause_reason and "threshold of 20%" in job.pause_reason
    children = DeadLetter.objects.filter(place=place, parent__isnull=False)
    assert children.count() == 5
    assert {child.headers["x-dlo-replay-id"] for child in children} == {child.parent.replay_id for child in children}
    # Nothing beyond the canary left custody, and nothing is stuck in flight.
    originals = DeadLetter.objects.filter(id__in=[letter.id for letter in letters])
    assert originals.filter(state=LetterState.REPLAYED).count() == 5
    assert originals.filter(state=LetterState.HELD).count() == LETTERS - 5
    assert AuditEvent.objects.filter(job_id=job.pk, action="capture").exists()  # the watch's capture is audited
    paused = AuditEvent.objects.get(job_id=job.pk, action="job.pause")
    assert paused.actor_name == "system:return-watch" and paused.reason == job.pause_reason

    # The consumer is fixed; the operator resumes: a new canary, then the rest.
    do_resume_job(job, actor=operator, reason="consumer redeployed")
    with StandingConsumer(kit, work, lambda message: ACK) as fixed:
        assert run_job(job.pk) == Job.Status.SUCCEEDED
    job.refresh_from_db()
    assert job.done == LETTERS and job.returned == 5 and job.pause_reason == ""
    assert fixed.acked == LETTERS - 5
    assert originals.filter(state=LetterState.REPLAYED).count() == LETTERS
    assert any("canary passed: 0 of 5" in line["message"] for line in job.log)


def test_a_replay_pauses_itself_when_returns_pass_the_threshold_midway(captured, kit, operator, monkeypatch):
    monkeypatch.setattr(returns, "WATCH_SECONDS", 0.3)
    monkeypatch.setattr(returns, "MIN_SAMPLE", 10)
    work, place, letters = captured("watch", _orders(200))
    # Slow enough that the watch looks several times before the end.
    job = request_job("replay", actor=operator, reason="retry all", filter={"place": str(place.pk)}, rate_limit=40,
                    return_threshold=10)
    with StandingConsumer(kit, work, lambda message: REJECT):
        assert run_job(job.pk) == Job.Status.PAUSED
    job.refresh_from_db()
    assert 10 <= job.done < 200 and job.returned > job.done * 0.1
    assert "above the threshold of 10%" in job.pause_reason
    # Every letter is accounted for: replayed (and some came back), or still held for later.
    originals = DeadLetter.objects.filter(id__in=[letter.id for letter in letters])
    assert originals.filter(state=LetterState.REPLAYED).count() == job.done
    assert originals.filter(state=LetterState.HELD).count() == 200 - job.done
