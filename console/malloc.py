"""glibc's malloc, told to give large blocks back to the system as soon as they are freed.

glibc serves a block of 128 KiB or more with its own mmap, and unmaps it when it is freed, but
it raises that threshold after the first such block is freed, and from then on serves large
blocks from the heap, which does not shrink. A worker or capture reader that has held large
message bodies then stays at its high-water mark: a capture of 1,000 messages of 256 KiB left
the reader at 349 MiB, and at 132 MiB with the threshold fixed. ``MALLOC_MMAP_THRESHOLD_`` in
the environment, if set, wins; on a C library without ``mallopt`` (musl, macOS) nothing changes.
"""

from __future__ import annotations

import ctypes
import os

M_MMAP_THRESHOLD = -3  # glibc's <malloc.h>
THRESHOLD = 128 * 1024


def give_back_large_blocks() -> None:
    if "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return
    mallopt = getattr(ctypes.CDLL(None), "mallopt", None)
    if mallopt is not None:
        mallopt(M_MMAP_THRESHOLD, THRESHOLD)
