"""A private asyncio event loop on a background thread, so async clients serve sync callers.

Django code calls the adapter from plain threads, and Django's ORM refuses to run inside an
event loop; so the adapter keeps its own loop on its own thread and hands coroutines to it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    """One event loop running forever on a daemon thread until ``stop()``."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    @property
    def running(self) -> bool:
        return self._thread.is_alive() and not self.loop.is_closed()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the loop and wait for its result (or its exception).

        On ``timeout`` the coroutine is cancelled and ``TimeoutError`` raised here.
        """
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("LoopThread.run called from its own loop: it would wait forever")
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise

    def stop(self, cleanup: Coroutine[Any, Any, Any] | None = None, timeout: float = 5.0) -> None:
        """Run ``cleanup`` (if any), cancel what is left, stop the loop and join the thread."""
        if not self.running:
            if cleanup is not None:
                cleanup.close()
            return
        if cleanup is not None:
            try:
                self.run(cleanup, timeout)
            except Exception:  # closing is best effort: the connections may be gone already
                pass
        try:
            self.run(_cancel_others(), timeout)
        except Exception:
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)
        if not self._thread.is_alive():
            self.loop.close()


async def _cancel_others() -> None:
    current = asyncio.current_task()
    tasks = [task for task in asyncio.all_tasks() if task is not current]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
