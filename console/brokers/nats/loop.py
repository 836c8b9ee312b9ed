"""A private asyncio event loop on a daemon thread, so nats-py (asyncio only) serves the
synchronous callers Django has (views, Celery tasks, the job runner)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    """One event loop running on its own thread until ``stop()``."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread.is_alive() and not self.loop.is_closed()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        """Run ``coro`` on the loop and wait for its result; on ``timeout`` cancel it and raise
        ``TimeoutError`` (a broker that stops answering must not hang a worker forever)."""
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
        """Run ``cleanup`` (best effort), stop the loop and join the thread. Safe to call twice."""
        if not self.running:
            if cleanup is not None:
                cleanup.close()
            return
        if cleanup is not None:
            try:
                self.run(cleanup, timeout)
            except Exception:  # the connection may be gone already; closing must not fail
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
    """Cancel the client's leftover tasks so the loop closes without orphans."""
    current = asyncio.current_task()
    tasks = [task for task in asyncio.all_tasks() if task is not current]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
