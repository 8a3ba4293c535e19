"""The SQLite schema, as a list of migration steps (step i brings version i to i+1).

Tables mirror the DynamoDB tables (names.Table): the same keys, the same meaning.
Fields that are only ever read back whole live in a JSON ``doc`` column; fields that
are queried, ordered or updated in place (status, order, counters...) are columns.
Never edit a released step: append a new one, and the next open migrates old files.
"""

from __future__ import annotations

COUNTER_COLUMNS = ("discovered", "crawled", "cached", "failed", "skipped", "processed", "words")

_V1_JOBS = (
    "CREATE TABLE jobs ("
    " job_id TEXT PRIMARY KEY,"
    " owner TEXT NOT NULL,"
    " status TEXT NOT NULL,"
    " created_at REAL NOT NULL,"
    + "".join(f" {name} INTEGER NOT NULL DEFAULT 0," for name in COUNTER_COLUMNS)
    + " doc TEXT NOT NULL)"
)

V1 = (
    _V1_JOBS,
    "CREATE INDEX jobs_by_owner ON jobs (owner, created_at)",
    "CREATE TABLE frontier ("
    " job_id TEXT NOT NULL,"
    " url_hash TEXT NOT NULL,"
    " url TEXT NOT NULL,"
    " depth INTEGER NOT NULL,"
    " parent TEXT,"
    " ord INTEGER NOT NULL,"
    " state TEXT NOT NULL,"
    " attempts INTEGER NOT NULL DEFAULT 0,"
    " lease_expires REAL,"
    " reason TEXT,"
    " sitemap_rank INTEGER,"
    " PRIMARY KEY (job_id, url_hash))",
    "CREATE INDEX frontier_by_state ON frontier (job_id, state, ord)",
    "CREATE INDEX frontier_by_order ON frontier (job_id, ord)",
    "CREATE TABLE cache (url_hash TEXT PRIMARY KEY, doc TEXT NOT NULL)",
    "CREATE TABLE pages ("
    " job_id TEXT NOT NULL,"
    " url_hash TEXT NOT NULL,"
    " ord INTEGER NOT NULL,"
    " doc TEXT NOT NULL,"
    " PRIMARY KEY (job_id, url_hash))",
    "CREATE INDEX pages_by_order ON pages (job_id, ord)",
    "CREATE TABLE events ("
    " job_id TEXT NOT NULL,"
    " seq INTEGER NOT NULL,"
    " type TEXT NOT NULL,"
    " ts REAL NOT NULL,"
    " data TEXT NOT NULL,"
    " PRIMARY KEY (job_id, seq))",
    "CREATE TABLE connections ("
    " connection_id TEXT PRIMARY KEY, owner TEXT NOT NULL, ts REAL NOT NULL)",
    "CREATE TABLE subscriptions ("
    " connection_id TEXT NOT NULL, job_id TEXT NOT NULL,"
    " PRIMARY KEY (connection_id, job_id))",
    "CREATE INDEX subscriptions_by_job ON subscriptions (job_id, connection_id)",
)

# The URLs a job found past its page cap, by hash (``Frontier.note_overflow``): kept with
# the outcomes that found them, so a killed and resumed crawl counts them as one that
# ran through does.
V2 = (
    "CREATE TABLE frontier_overflow ("
    " job_id TEXT NOT NULL,"
    " url_hash TEXT NOT NULL,"
    " PRIMARY KEY (job_id, url_hash)) WITHOUT ROWID",
)

MIGRATIONS: tuple[tuple[str, ...], ...] = (V1, V2)

SCHEMA_VERSION = len(MIGRATIONS)
