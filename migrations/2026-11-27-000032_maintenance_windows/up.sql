-- Maintenance windows: when a monitor's alerts are held (`silence`) or its
-- checks are not run (`pause`). Written by the api-gateway; the recorder's
-- maintenance sweep (one replica at a time) expands them into spans and
-- marks the covered monitors.
CREATE TABLE maintenance_windows (
    id              BIGSERIAL PRIMARY KEY,
    org_id          BIGINT NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    name            TEXT NOT NULL,
    -- Which monitors: these ids and/or every monitor whose labels hold the
    -- selector (evaluated at every sweep, so a monitor created later joins).
    monitor_ids     BIGINT[] NOT NULL DEFAULT '{}',
    label_selector  JSONB,
    effect          TEXT NOT NULL CHECK (effect IN ('silence', 'pause')),
    -- One-off: starts_at..ends_at. Recurring: the RRULE's first local start
    -- (its DTSTART) in `timezone`, each occurrence `duration_secs` long.
    starts_at       TIMESTAMPTZ NOT NULL,
    ends_at         TIMESTAMPTZ,
    rrule           TEXT,
    timezone        TEXT,
    duration_secs   INTEGER,
    -- When the window can never be open again (a one-off's end, a rule's
    -- last occurrence's end); NULL for an endless rule. The sweep reads only
    -- windows not past it, and retention deletes them some days after it.
    last_ends_at    TIMESTAMPTZ,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    CHECK ((rrule IS NULL AND ends_at IS NOT NULL)
        OR (rrule IS NOT NULL AND timezone IS NOT NULL AND duration_secs IS NOT NULL))
);
CREATE INDEX maintenance_windows_org_idx ON maintenance_windows (org_id, id);
CREATE INDEX maintenance_windows_last_end_idx ON maintenance_windows (last_ends_at)
    WHERE last_ends_at IS NOT NULL;

-- The occurrences the sweep opened: one row per (window, occurrence start),
-- with what the window covered and did then. Open while `closed_at` is
-- NULL. A span outlives its window (window_id becomes NULL on delete) so the
-- daily uptime keeps reporting the maintenance time it held; closed spans
-- are pruned after `retention.maintenance_spans_days`.
CREATE TABLE maintenance_spans (
    id              BIGSERIAL PRIMARY KEY,
    window_id       BIGINT REFERENCES maintenance_windows(id) ON DELETE SET NULL,
    org_id          BIGINT NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    effect          TEXT NOT NULL,
    monitor_ids     BIGINT[] NOT NULL,
    label_selector  JSONB,
    starts_at       TIMESTAMPTZ NOT NULL,
    ends_at         TIMESTAMPTZ NOT NULL,
    closed_at       TIMESTAMPTZ
);
CREATE UNIQUE INDEX maintenance_spans_occurrence_idx ON maintenance_spans (window_id, starts_at);
CREATE INDEX maintenance_spans_open_idx ON maintenance_spans (id) WHERE closed_at IS NULL;
CREATE INDEX maintenance_spans_org_idx ON maintenance_spans (org_id, ends_at);

-- The marker the sweep keeps on each covered monitor while a span is open:
-- the scheduler reads `maintenance_effect` with the check configuration it
-- already loads (a paused monitor's slot is skipped), the recorder with the
-- monitor rows it already locks (alerts held, results and events marked
-- `in_maintenance`). Nullable without defaults: adding them rewrites
-- nothing, and a monitor outside maintenance has no entry in the index.
ALTER TABLE monitors
    ADD COLUMN maintenance_effect TEXT,
    ADD COLUMN maintenance_since  TIMESTAMPTZ,
    ADD COLUMN maintenance_until  TIMESTAMPTZ;
CREATE INDEX monitors_in_maintenance_idx ON monitors (id) WHERE maintenance_effect IS NOT NULL;

-- A result checked inside a window: stored as such, left out of the daily
-- uptime. A constant default: a catalogue-only change on every partition.
ALTER TABLE check_results ADD COLUMN in_maintenance BOOLEAN NOT NULL DEFAULT false;
