-- The audit log (issue 21): every write through the API, written in the
-- transaction of the change it records. Pruned by age in batches
-- (uptime-retention, `retention.audit_log_days`), hence the index on `at`.
CREATE TABLE audit_log (
    id             BIGSERIAL PRIMARY KEY,
    org_id         BIGINT NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    -- No foreign key: an entry outlives its actor's membership and user.
    actor_user_id  BIGINT NOT NULL,
    key_prefix     TEXT NOT NULL,
    address        TEXT,
    at             TIMESTAMPTZ NOT NULL DEFAULT now(),
    action         TEXT NOT NULL,
    resource_kind  TEXT NOT NULL,
    resource_id    BIGINT,
    -- {"field": {"before": ..., "after": ...}} for the changed fields;
    -- secrets are "[changed]".
    changes        JSONB NOT NULL DEFAULT '{}'
);
-- The list: an organisation's entries newest first, by id.
CREATE INDEX audit_log_org_idx ON audit_log (org_id, id DESC);
CREATE INDEX audit_log_at_idx ON audit_log (at);

-- Audit entries go out through the outbox too; they concern no monitor.
ALTER TABLE outbox_events ALTER COLUMN monitor_id DROP NOT NULL;
