-- Incidents: every confirmed down period of a monitor. The recorder opens one
-- in the transaction that records the change to `down` and resolves it in the
-- one that records the change out of it; its id is derived from the monitor
-- and the moment it went down, so the event that opens it and the one that
-- resolves it name it without reading it back. Resolved incidents are pruned
-- after `retention.incidents_days` (uptime-retention), hence the index on
-- `resolved_at`; open ones are never pruned.
CREATE TABLE incidents (
    id                          UUID PRIMARY KEY,
    org_id                      BIGINT NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    monitor_id                  BIGINT NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
    started_at                  TIMESTAMPTZ NOT NULL,
    resolved_at                 TIMESTAMPTZ,
    -- The error of the check that confirmed the outage.
    cause                       TEXT,
    acknowledged_at             TIMESTAMPTZ,
    -- `api` (a key: its holder and prefix) or `link` (the signed link in
    -- an alert: the contact it was sent to).
    acknowledged_via            TEXT CHECK (acknowledged_via IN ('api', 'link')),
    acknowledged_by_user_id     BIGINT,
    acknowledged_by_key_prefix  TEXT,
    acknowledged_by_contact_id  BIGINT,
    -- The events of the incident, oldest first: [{event_id, kind, at, held}].
    alerts                      JSONB NOT NULL DEFAULT '[]'
);
-- At most one open incident per monitor.
CREATE UNIQUE INDEX incidents_open_idx ON incidents (monitor_id) WHERE resolved_at IS NULL;
-- The list: an organisation's incidents newest first.
CREATE INDEX incidents_org_idx ON incidents (org_id, started_at DESC, id DESC);
CREATE INDEX incidents_monitor_idx ON incidents (monitor_id, started_at DESC);
CREATE INDEX incidents_resolved_idx ON incidents (resolved_at) WHERE resolved_at IS NOT NULL;
