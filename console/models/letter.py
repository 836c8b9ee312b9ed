from __future__ import annotations

from django.contrib.postgres.indexes import GinIndex
from django.db import models


class LetterState(models.TextChoices):
    """SAP PI's words in brackets: held [NDLV] -> replaying [TBDL/DLNG] -> replayed [DLVD];
    held -> failed [FAIL]; held -> purged (body erased, tombstone kept).

    ``replaying`` is never stored in the letter's row: a letter being replayed is ``held`` with a
    LetterFlight, read as ``replaying`` where states are shown and filtered."""

    HELD = "held"
    REPLAYING = "replaying"
    REPLAYED = "replayed"
    FAILED = "failed"
    PURGED = "purged"


class DeadLetter(models.Model):
    """One message in the console's custody, with its failure envelope.

    Headers and properties are kept as JSON with the broker's types tagged (see
    console.letters.values); the body is kept as the exact bytes received.
    """

    # Not indexed alone: the indexes below that start with place_id serve it.
    place = models.ForeignKey("console.DeadPlace", on_delete=models.PROTECT, related_name="letters",
                              db_index=False)
    # Always the place's broker. Like every reference below that custody writes for each captured
    # letter, it has no foreign-key constraint in the database: a deferred constraint costs one
    # lookup per row at each capture's commit (five per letter, a third of the commit), and what
    # it would guard is written from rows already checked (the place, the running job) in the
    # same transaction. Django still applies on_delete (PROTECT, SET_NULL, CASCADE).
    broker = models.ForeignKey("console.Broker", on_delete=models.PROTECT, related_name="letters",
                               db_constraint=False)
    state = models.CharField(max_length=16, choices=LetterState.choices, default=LetterState.HELD)
    state_changed_at = models.DateTimeField(auto_now_add=True)

    # Identity of the message as the broker gave it.
    message_id = models.CharField(max_length=500, blank=True)
    custody_key = models.CharField(max_length=64, help_text="Hash of id, properties, headers and body")
    capture_job = models.ForeignKey(
        "console.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="captured",
        db_index=False,  # nothing looks letters up by it; an index would cost every change of state
        db_constraint=False,
    )
    captured_at = models.DateTimeField(auto_now_add=True, db_index=True)

    # The failure envelope.
    origin_address = models.CharField(max_length=500, blank=True)
    origin_queue = models.CharField(max_length=500, blank=True)
    routing_key = models.CharField(max_length=500, blank=True)
    reason = models.CharField(max_length=50, blank=True)
    death_count = models.IntegerField(default=0)
    first_failed_at = models.DateTimeField(null=True, blank=True)
    last_failed_at = models.DateTimeField(null=True, blank=True)
    exception_type = models.CharField(max_length=500, blank=True)
    exception_message = models.TextField(blank=True)
    exception_stack = models.TextField(blank=True)
    fingerprint = models.CharField(max_length=32, blank=True)
    envelope_details = models.JSONField(default=dict, blank=True)

    # The message itself.
    headers = models.JSONField(default=dict, blank=True)
    properties = models.JSONField(default=dict, blank=True)
    body = models.BinaryField(default=b"")
    body_size = models.BigIntegerField(default=0)
    body_erased = models.BooleanField(default=False)

    # Replay and lineage.
    replay_id = models.CharField(max_length=64, blank=True, help_text="Header value of the last replay")
    replayed_to = models.CharField(max_length=500, blank=True)
    replayed_at = models.DateTimeField(null=True, blank=True)
    last_job = models.ForeignKey(
        "console.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+", db_index=False,
        # No constraint in the database either (see broker above): a replay sets it on every letter
        # it marks, and the deferred check locked the job's row once per letter at each commit.
        db_constraint=False,
    )
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="returns", db_index=False,
        help_text="The letter whose replay died again and came back as this one",
    )
    replay_count = models.IntegerField(
        default=0, help_text="How many times the console replayed this message's lineage before it came back as "
                             "this letter (the parent's count plus one; 0 for a first death)")

    # Replay-loop quarantine (SAP's NDLV): no rule replays a quarantined letter until a person releases it.
    quarantined_at = models.DateTimeField(null=True, blank=True)
    quarantine_reason = models.CharField(max_length=500, blank=True)

    # The trace its failure belongs to (console.tracing.context), "" when it carries none. Not
    # indexed here: every index on this table is written again at each change of state, so
    # LetterTrace holds the index the trace filter uses.
    trace_id = models.CharField(max_length=32, blank=True, default="", db_default="")
    span_id = models.CharField(max_length=16, blank=True, default="", db_default="")

    class Meta:
        ordering = ["id"]
        indexes = [
            # Plain btrees (no varchar_pattern_ops twins: these are only ever matched whole).
            # Every index costs each capture and each change of state, so there are no more than needed.
            models.Index(fields=["origin_queue"], name="letter_origin_queue"),
            models.Index(fields=["fingerprint"], name="letter_fingerprint"),
            models.Index(fields=["place", "state", "id"]),
            # A place's letters in id order (the letters list, keyset pages), whatever their
            # state: without it a small place beside a big one is found by walking the whole
            # primary key.
            models.Index(fields=["place", "id"], name="letter_place_id"),
            models.Index(fields=["replay_id"], condition=~models.Q(replay_id=""), name="letter_replay_id"),
            # A letter's returns (lineage); only the few letters that are returns have a parent.
            models.Index(fields=["parent"], condition=models.Q(parent__isnull=False), name="letter_parent"),
            # Failure groups (console.services.groups) read only this index: its ends give a
            # group's first and last letter in a place and state; a group counted from the
            # letters themselves is read from it alone, no heap visits once vacuumed.
            models.Index(fields=["place", "state", "fingerprint", "captured_at", "id"], include=["origin_queue"],
                         name="letter_groups"),
        ]

    def __str__(self) -> str:
        return f"letter {self.pk} ({self.state})"

    @property
    def body_bytes(self) -> bytes:
        return bytes(self.body) if self.body is not None else b""


class PendingAck(models.Model):
    """A captured letter committed in custody whose message the broker has not been told to
    drop yet (the ack follows the commit). A crash in between makes the broker deliver the
    message again, flagged redelivered; it then matches this copy instead of being stored
    twice. A narrow table of its own, so acking a batch deletes small rows instead of writing
    a new version of each wide letter row and all its indexes; it carries the letter's place
    and custody key, so the match reads only these rows (the letters need no index for it)."""

    # No constraints in the database: written with the letter, in its transaction (see DeadLetter.broker).
    letter = models.OneToOneField(DeadLetter, primary_key=True, on_delete=models.CASCADE,
                                  related_name="pending_ack", db_constraint=False)
    place = models.ForeignKey("console.DeadPlace", on_delete=models.CASCADE, related_name="+", db_index=False,
                              db_constraint=False)
    custody_key = models.CharField(max_length=64)

    class Meta:
        indexes = [models.Index(fields=["place", "custody_key"], name="pending_ack_match")]


class UniqueDeath(models.Model):
    """A letter whose broker names its death once (``Received.once``): the key of that death,
    kept while the letter is, so the same death told again later matches the letter instead of
    being stored twice. NATS sends a delivery advisory per terminated delivery: a worker's
    AckTerm that lands after its ack wait ran out, and the AckTerm of the redelivery, announce
    one message twice (seen: 200 letters stored twice in the NATS crash test). Unique, so two
    captures storing the same death at once cannot both commit."""

    letter = models.OneToOneField(DeadLetter, primary_key=True, on_delete=models.CASCADE,
                                  related_name="unique_death", db_constraint=False)
    place = models.ForeignKey("console.DeadPlace", on_delete=models.CASCADE, related_name="+", db_index=False,
                              db_constraint=False)
    custody_key = models.CharField(max_length=64)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["place", "custody_key"], name="unique_death_key")]


class LetterFlight(models.Model):
    """A letter a replay or a move has taken and may have handed to the broker, until the
    outcome is recorded: the claim that keeps every other job, edit and action off it, and what
    a crash leaves for the job to publish again (with the same replay id).

    It replaces the letter's ``replaying`` state. A letter row is wide and has ten indexes, and
    a change of its state is never a heap-only update (the state is indexed): the mark and the
    record each wrote a new version of the row and an entry in every index. Now the mark writes
    this narrow row (and locks the letter's), and the record writes the letter once, as
    ``replayed``; a letter the broker did not confirm stays ``held`` and is only released.
    Read as ``replaying`` wherever a letter's state is shown or filtered
    (console.services.flights).

    Rows are few: at most two batches per running job, plus what a crashed job left until it
    resumes or ends (a trigger releases a finished job's rows, migration 0040)."""

    # No constraints in the database: written from rows locked in the same transaction.
    letter = models.OneToOneField(DeadLetter, primary_key=True, on_delete=models.CASCADE, related_name="flight",
                                  db_constraint=False)
    job = models.ForeignKey("console.Job", on_delete=models.CASCADE, related_name="+", db_constraint=False,
                            db_index=False)  # found by a scan of these few rows
    replay_id = models.CharField(max_length=64, help_text="Header value of this replay, kept until it is confirmed")


class LetterSearch(models.Model):
    """What the letter filters search: the letter's headers (a GIN index for ``header=value``)
    and its body as text, PostgreSQL's ``encode(body, 'escape')``, which keeps bytes 0x01 to
    0x7F as they are, doubles backslashes, and writes NUL and bytes over 0x7F as ``\\nnn`` in
    octal (a trigram index finds the letters that may hold a needle).

    It lives beside the letter, not on it, because a letter row is rewritten at every change of
    state (replaying, replayed, failed), and every index on it with the row: these two indexes
    hold dozens of keys for the headers and about a thousand trigrams for a 1 KiB body, and on
    the letters table they made each change of state several times dearer (the trigrams most of
    all). Triggers on the letters table (migration 0014) write this row when
    a letter is inserted, by any path, COPY included, and when its body or headers change
    (edit, purge); nothing else writes it.

    The text is the body's first TEXT_BYTES only (``partial`` when the body is longer): the
    trigrams of a large body cost far more than storing it (random bytes most of all; see
    benchmarks/README.md, capture_vs_shovel.py), and a letter with a partial text is always
    looked at by its body instead.
    """

    #: How much of a body the text holds (migration 0017's triggers write it).
    TEXT_BYTES = 64 * 1024

    # No constraint in the database: the insert trigger writes this row from the letter itself.
    letter = models.OneToOneField(DeadLetter, primary_key=True, on_delete=models.CASCADE, related_name="+",
                                  db_constraint=False)
    headers = models.JSONField(default=dict)
    text = models.TextField()
    partial = models.BooleanField(default=False)
    #: A placeholder a capture wrote (migration 0029): no text nor headers yet, ``partial``
    #: set, until console.services.search_rows fills it in after the capture's commit.
    pending = models.BooleanField(default=False)
    #: The letter's properties or headers may say its body is compressed (console.services.
    #: search_rows.COMPRESSED): its text is the decoded body's, and the body filter decides on
    #: the decoded body. Set when the row is written (migration 0043 for rows before it), so
    #: that the few such letters are found by their own index, not by testing every candidate.
    compressed = models.BooleanField(default=False, db_default=False)

    class Meta:
        indexes = [
            GinIndex(fields=["headers"], name="letter_search_headers", opclasses=["jsonb_path_ops"]),
            GinIndex(fields=["text"], opclasses=["gin_trgm_ops"], name="letter_search_text"),
            models.Index(fields=["letter"], condition=models.Q(partial=True), name="letter_search_partial"),
            models.Index(fields=["letter"], condition=models.Q(pending=True), name="letter_search_pending"),
            models.Index(fields=["letter"], condition=models.Q(compressed=True), name="letter_search_compressed"),
        ]


class LetterDocument(models.Model):
    """A letter's body as PostgreSQL's jsonb, for the rules' body paths (console.services.rules.
    matching): ``document`` is ``console_body_json(body)`` (migration 0035), NULL when the body
    is not JSON as console.letters.bounded_json reads it. A GIN index (jsonb_path_ops) finds the
    letters whose body holds a value at a path by containment (``@>``), and the match is then
    decided on the stored document, never by parsing a body again: at a million letters a body
    path on a common value ("CHF") parsed a third of the bodies, seconds each dry run.

    Like LetterSearch it lives beside the letter (a letter row is rewritten at every change of
    state, and every index on it with the row) and is written by the same triggers (migration
    0036): at insert, by any path, and when the body changes; a capture's letters get theirs
    when their search rows are filled after the capture (console.services.search_rows), and until
    then a body path reads such a letter's body itself."""

    # No constraint in the database: the triggers write the row from the letter itself.
    letter = models.OneToOneField(DeadLetter, primary_key=True, on_delete=models.CASCADE, related_name="+",
                                  db_constraint=False)
    document = models.JSONField(null=True)

    class Meta:
        indexes = [GinIndex(fields=["document"], opclasses=["jsonb_path_ops"], name="letter_document_values")]


class LetterTrace(models.Model):
    """A traced letter's trace id, indexed, for the ``trace_id`` filter and a failure group's
    count of traces (by ``fingerprint``, in the ``place``s a reader sees).

    It lives beside the letter for the reason LetterSearch does (a letter row is rewritten at
    every change of state, and every index on it with the row), and is written the way
    LetterSearch is, by triggers (migration 0042): at a letter's insert by any path, but for a
    capture's letters when their search placeholders are filled after the capture
    (console.services.search_rows), so a capture's COPY pays nothing for it. Until then the
    trace filter reads such a letter's own ``trace_id`` (console.services.letter_filters). A
    letter's trace id is written once, when it is taken into custody."""

    # No constraint in the database: the triggers write the row from the letter itself.
    letter = models.OneToOneField(DeadLetter, primary_key=True, on_delete=models.CASCADE, related_name="+",
                                  db_constraint=False)
    trace_id = models.CharField(max_length=32)
    place = models.ForeignKey("console.DeadPlace", on_delete=models.DO_NOTHING, related_name="+",
                              db_index=False, db_constraint=False)
    fingerprint = models.CharField(max_length=32, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["trace_id"], name="letter_trace_id"),
            # A group's traces in the places a reader sees, read from the index alone.
            models.Index(fields=["fingerprint", "place", "trace_id"], name="letter_trace_group"),
        ]


class GroupCount(models.Model):
    """How many letters a failure group has, kept by the database itself: rows of counts per
    place, state, fingerprint, origin queue, reason, exception type and day of capture, added
    to by triggers on the letters table (migrations 0030, 0061) at every insert, delete and
    change of one of those columns, by any path (a capture's COPY, a job's update, a purge,
    retention, a migration). A row is a change (+n or -n), never rewritten by the triggers; a
    group's count is the sum of its rows, exact in any transaction's snapshot, since each change
    commits with the letters it counts.
    console.services.group_counts folds each key's rows into one now and then.

    The failure groups page reads these few rows instead of counting a million letters
    (console.services.groups)."""

    # No constraints in the database: the triggers write the letters' own values.
    place = models.ForeignKey("console.DeadPlace", on_delete=models.DO_NOTHING, related_name="+",
                              db_constraint=False, db_index=False)
    broker = models.ForeignKey("console.Broker", on_delete=models.DO_NOTHING, related_name="+",
                               db_constraint=False, db_index=False)
    state = models.CharField(max_length=16)
    fingerprint = models.CharField(max_length=32)
    origin_queue = models.CharField(max_length=500)
    # A group's exception and reason, so that a filter on them is answered here (a saved view's
    # count in the Views menu): the fingerprint is made of them, so they add few rows.
    reason = models.CharField(max_length=50, default="")
    exception_type = models.CharField(max_length=500, default="")
    day = models.DateField(help_text="The UTC day the letters were captured")
    letters = models.BigIntegerField(help_text="Letters added (or, below zero, taken away)")

    class Meta:
        indexes = [models.Index(fields=["place", "state", "fingerprint"], name="group_count_key")]
