-- Alert deliveries: one row per (event, contact), written before the event is
-- acknowledged, so an alert survives any crash and reaches each contact once.
-- The notifier's delivery workers claim due rows, attempt them and record
-- every attempt.
CREATE TABLE alert_deliveries (
    -- Stable across retries: sent as the `webhook-id` so receivers can deduplicate.
    id               UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    -- The event (state change, certificate warning), verification request or test.
    event_id         UUID NOT NULL,
    contact_id       BIGINT NOT NULL REFERENCES alert_contacts(id) ON DELETE CASCADE,
    -- No foreign key: the delivery log outlives a deleted monitor.
    monitor_id       BIGINT,
    kind             TEXT NOT NULL CHECK (kind IN ('alert', 'verification', 'test')),
    -- `monitor.down`, `monitor.up`, `monitor.degraded`, `ssl.expiring`, `test` or `verification`.
    event_type       TEXT NOT NULL,
    -- Everything the sender needs (the webhook body for alerts), so workers never read NATS.
    payload          JSONB NOT NULL,
    status           TEXT NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    last_error       TEXT,
    next_attempt_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- A worker's lease on the row while it attempts it; once it has passed
    -- (the worker crashed), another worker may claim the row again.
    locked_until     TIMESTAMPTZ,
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    delivered_at     TIMESTAMPTZ,
    UNIQUE (event_id, contact_id)
);
CREATE INDEX alert_deliveries_due_idx ON alert_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX alert_deliveries_contact_idx ON alert_deliveries (contact_id, created_at DESC);
-- Serves the per-contact ordering check of the claim: is an older delivery to
-- this contact still pending?
CREATE INDEX alert_deliveries_pending_contact_idx ON alert_deliveries (contact_id, id) WHERE status = 'pending';

CREATE TABLE alert_delivery_attempts (
    id            BIGSERIAL PRIMARY KEY,
    delivery_id   UUID NOT NULL REFERENCES alert_deliveries(id) ON DELETE CASCADE,
    attempted_at  TIMESTAMPTZ NOT NULL,
    -- `delivered`, `retry` (a transient failure, tried again later) or `failed` (given up).
    outcome       TEXT NOT NULL CHECK (outcome IN ('delivered', 'retry', 'failed')),
    http_status   INTEGER,
    error         TEXT,
    duration_ms   INTEGER NOT NULL
);
CREATE INDEX alert_delivery_attempts_delivery_idx ON alert_delivery_attempts (delivery_id, id);
