"""A place's trend for its charts: depth and custody from the periodic samples, arrivals from
the letters' own ``captured_at``, in buckets as wide as the data's age calls for.

A place discovered a few minutes ago is drawn per minute, one a few days old per hour or
few hours, an older one per day, so a chart has a readable number of points at every age
instead of one dot. Arrivals are counted from the letters the reader may see (whatever took
them: a capture, the keeper), not from the samples, whose first one per place counts nothing.

Both reads are bounded by ``WINDOW``: the samples by their (place, at) index, the letters by
the ``captured_at`` index (or a place's own indexes, as the planner finds cheaper), so a
place holding a million old letters reads only those captured in the window.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.db.models import Count, DateTimeField, Func, Min, QuerySet, Value
from django.utils import timezone

from console.models import DeadLetter, PlaceSample

#: How far back a chart looks at most.
WINDOW = timedelta(days=30)
#: Bucket widths, finest first, and how each is named; a chart takes the finest one that keeps
#: it within ``MAX_POINTS`` points.
WIDTHS = (
    (timedelta(minutes=1), "minute"),
    (timedelta(minutes=5), "5 minutes"),
    (timedelta(minutes=15), "15 minutes"),
    (timedelta(hours=1), "hour"),
    (timedelta(hours=3), "3 hours"),
    (timedelta(hours=6), "6 hours"),
    (timedelta(days=1), "day"),
)
MAX_POINTS = 60
#: A chart shows at least this many buckets up to now, so a place's first minute is a line
#: from zero, not a lone dot.
MIN_POINTS = 10
#: Where buckets start (PostgreSQL's ``date_bin`` and ``Bucket.start`` agree on it).
EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Bucket:
    """The width of a chart's buckets and its name ("minute", "3 hours")."""

    width: timedelta
    name: str

    @property
    def daily(self) -> bool:
        return self.width >= timedelta(days=1)

    def start(self, moment: datetime) -> datetime:
        """The start of the bucket ``moment`` falls in."""
        return EPOCH + (moment - EPOCH) // self.width * self.width


def bucket_for(span: timedelta) -> Bucket:
    """The finest bucket that draws ``span`` in at most ``MAX_POINTS`` points."""
    for width, name in WIDTHS:
        if span <= width * MAX_POINTS:
            return Bucket(width, name)
    return Bucket(*WIDTHS[-1])


class DateBin(Func):
    """PostgreSQL's ``date_bin(stride, moment, origin)``: the start of the moment's bucket."""

    function = "date_bin"
    output_field = DateTimeField()


@dataclass
class SamplePoint:
    """The newest sample in a bucket: depth on the broker (``None`` when it did not say) and letters held."""

    at: datetime
    depth: int | None
    held: int


@dataclass
class PlaceTrend:
    """A place's buckets since ``since``: samples where there were any, arrivals in every bucket."""

    bucket: Bucket
    since: datetime
    samples: list[SamplePoint]
    arrivals: list[tuple[datetime, int]]

    @property
    def empty(self) -> bool:
        return not self.samples and not self.arrivals

    @property
    def captured(self) -> int:
        return sum(count for _, count in self.arrivals)


def place_trend(place_id: int, letters: QuerySet[DeadLetter], *, now: datetime | None = None) -> PlaceTrend:
    """The trend of a place; ``letters`` are the place's letters the reader may see."""
    now = now or timezone.now()
    oldest = now - WINDOW
    samples = PlaceSample.objects.filter(place_id=place_id, at__gte=oldest).order_by("at")
    in_window = letters.filter(captured_at__gte=oldest).order_by()
    firsts = [
        samples.values_list("at", flat=True).first(),
        in_window.aggregate(first=Min("captured_at"))["first"],
    ]
    first = min((moment for moment in firsts if moment is not None), default=None)
    if first is None:
        return PlaceTrend(bucket_for(timedelta(0)), now, [], [])
    bucket = bucket_for(now - first)
    since = min(bucket.start(first), bucket.start(now) - bucket.width * (MIN_POINTS - 1))
    return PlaceTrend(bucket, since, _sample_points(samples, bucket), _arrivals(in_window, bucket, since, now))


def _sample_points(samples: QuerySet[PlaceSample], bucket: Bucket) -> list[SamplePoint]:
    """The newest sample of each bucket (one a minute is 43,200 small rows at most: folded here)."""
    points: dict[datetime, SamplePoint] = {}
    for at, depth, held in samples.values_list("at", "depth", "held"):
        points[bucket.start(at)] = SamplePoint(at, depth, held)
    return list(points.values())


def _arrivals(letters: QuerySet[DeadLetter], bucket: Bucket, since: datetime,
              now: datetime) -> list[tuple[datetime, int]]:
    """Letters captured per bucket from ``since`` to now, a bucket with none counting 0."""
    binned = DateBin(Value(bucket.width), "captured_at", Value(EPOCH))
    counts = dict(
        letters.filter(captured_at__gte=since).annotate(bin=binned).values("bin")
        .annotate(letters=Count("id")).values_list("bin", "letters")
    )
    moments, moment = [], since
    while moment <= now:
        moments.append(moment)
        moment += bucket.width
    return [(moment, counts.get(moment, 0)) for moment in moments]
