-- check_results becomes a table partitioned by day, so that expiring a day of
-- results is dropping one partition (no row-by-row DELETE, no bloat), and the
-- newest results of a monitor are read from the newest partition.
--
-- The partition key is `slot_at`: the time the `check_id` fixes, written by
-- the recorder as COALESCE(due_at, checked_at). A scheduled check's due_at is
-- its slot, a manual check's the time it was requested, a missed heartbeat's
-- its deadline; a ping has no due_at but is published once with a fixed
-- checked_at. So a redelivered result and a re-run check (same check_id, later
-- checked_at) have the same slot_at, land in the same partition and conflict
-- on the primary key (check_id, slot_at): recording stays idempotent. (A
-- generated column cannot be a partition key, hence a plain column.)
--
-- Partitions are named check_results_pYYYYMMDD and cover one UTC day; the
-- recorder's retention maintenance (uptime-retention) creates them ahead and
-- drops those past `retention.results_days`. check_results_default takes any
-- result no day partition covers (too far ahead, too old, or before the
-- maintenance first ran) so that an accepted result is never refused;
-- maintenance moves its rows into their day's partition when it creates it,
-- and deletes those past retention.
--
-- No foreign key to monitors any more: ON DELETE CASCADE made deleting a
-- monitor delete millions of rows in one statement. A deleted monitor's
-- results are invisible (the API reads results only of a monitor that exists,
-- and ids are never reused) and go with their partitions.
--
-- This copies the existing rows: writers wait on the lock until it commits.

LOCK TABLE check_results IN ACCESS EXCLUSIVE MODE;

CREATE TABLE check_results_partitioned (
    id                  BIGINT NOT NULL,
    check_id            UUID NOT NULL,
    monitor_id          BIGINT NOT NULL,
    trigger             TEXT NOT NULL CONSTRAINT check_results_trigger_check CHECK (trigger IN ('scheduled', 'manual', 'heartbeat')),
    status              TEXT NOT NULL CONSTRAINT check_results_status_check CHECK (status IN ('up', 'degraded', 'down')),
    checked_at          TIMESTAMPTZ NOT NULL,
    due_at              TIMESTAMPTZ,
    latency_ms          INTEGER,
    http_status         INTEGER,
    error               TEXT,
    ssl_expires_at      TIMESTAMPTZ,
    reporter            TEXT NOT NULL,
    recorded_at         TIMESTAMPTZ NOT NULL DEFAULT now(),
    definition_version  BIGINT,
    slot_at             TIMESTAMPTZ NOT NULL
) PARTITION BY RANGE (slot_at);

CREATE TABLE check_results_default PARTITION OF check_results_partitioned DEFAULT;

-- A partition for every day that has rows, and for yesterday to a week ahead
-- (UTC) so that nothing lands in the default partition until maintenance
-- runs. Rows further ahead than that (a wrong clock) go to the default
-- partition like any out-of-range result; partitions past retention are
-- dropped by the first maintenance round.
DO $$
DECLARE
    today DATE := (now() AT TIME ZONE 'UTC')::date;
    day   DATE;
BEGIN
    FOR day IN
        SELECT today + i FROM generate_series(-1, 7) AS g(i)
        UNION
        SELECT DISTINCT (COALESCE(due_at, checked_at) AT TIME ZONE 'UTC')::date
          FROM check_results
         WHERE COALESCE(due_at, checked_at) < (today + 8)::timestamp AT TIME ZONE 'UTC'
        ORDER BY 1
    LOOP
        EXECUTE format(
            'CREATE TABLE %I PARTITION OF check_results_partitioned FOR VALUES FROM (%L) TO (%L)',
            'check_results_p' || to_char(day, 'YYYYMMDD'),
            to_char(day, 'YYYY-MM-DD') || ' 00:00:00+00',
            to_char(day + 1, 'YYYY-MM-DD') || ' 00:00:00+00');
    END LOOP;
END
$$;

-- Ids keep growing from the same sequence; it must outlive the old table.
ALTER SEQUENCE check_results_id_seq OWNED BY NONE;

-- Indexes are built after the copy: one sort per partition, not a row at a time.
INSERT INTO check_results_partitioned
    (id, check_id, monitor_id, trigger, status, checked_at, due_at, latency_ms, http_status,
     error, ssl_expires_at, reporter, recorded_at, definition_version, slot_at)
SELECT id, check_id, monitor_id, trigger, status, checked_at, due_at, latency_ms, http_status,
       error, ssl_expires_at, reporter, recorded_at, definition_version,
       COALESCE(due_at, checked_at)
  FROM check_results;

DROP TABLE check_results;
ALTER TABLE check_results_partitioned RENAME TO check_results;
ALTER TABLE check_results ALTER COLUMN id SET DEFAULT nextval('check_results_id_seq');
ALTER SEQUENCE check_results_id_seq OWNED BY check_results.id;

-- One row per check_id (its slot_at is fixed by it); also finds a result by
-- check_id (manual_checks::claim) with one probe per partition it searches.
ALTER TABLE check_results ADD CONSTRAINT check_results_pkey PRIMARY KEY (check_id, slot_at);
-- Newest-first pages of a monitor: ORDER BY slot_at DESC, id DESC with a
-- keyset cursor (slot_at, id).
CREATE INDEX check_results_monitor_slot_idx ON check_results (monitor_id, slot_at DESC, id DESC);

ANALYZE check_results;
