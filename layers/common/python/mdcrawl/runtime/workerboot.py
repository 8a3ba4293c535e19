"""What a conversion worker needs before its first page, loaded once in the forkserver
(``workers.process_pool``) that forks every worker: the worker's own module, the
converter, readability, and the generator rules' selectors compiled by one warm-up
conversion. Forked workers inherit all of it, so a worker costs a fork, not an
interpreter start, the CLI's imports and the converter's.

Nothing here opens a store, starts a thread or reads the parent's state: the forkserver
forks from this process, and a worker opens its stores in ``workers._init_worker``.

Last, everything loaded so far (modules, compiled patterns, the warm-up's caches: some
40,000 objects that live as long as the worker) is moved out of the cyclic garbage
collector's sight (``gc.freeze``): a worker converting pages makes a full collection
every few pages (the parsed trees are full of cycles), and each one walked all of them
again, ~5 % of a worker's CPU on Rust core. Frozen objects are still freed by reference
counting; only a cycle among them would never be, and they live as long as the worker."""

from __future__ import annotations

import gc
import logging

from . import workers

log = logging.getLogger(__name__)

try:
    workers.warm_up()
except Exception as exc:  # noqa: BLE001 - a forkserver that dies here breaks every pool
    log.warning("warming the conversion workers up failed: %r", exc)

gc.freeze()  # after the warm-up: what it loaded is inherited by every worker, frozen
