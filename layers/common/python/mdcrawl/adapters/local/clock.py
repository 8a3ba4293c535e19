"""SystemClock: the wall clock, behind the Clock port so tests can hold time still."""

from __future__ import annotations

import time


class SystemClock:
    def now(self) -> float:
        return time.time()
