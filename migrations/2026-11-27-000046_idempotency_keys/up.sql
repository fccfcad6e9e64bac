-- `Idempotency-Key` on POST: the first response to a key is kept and
-- replayed to a retry of the same request, so a client that timed out can
-- send again without creating twice. A row is written before the handler
-- runs (with no response: in flight) and completed after it; a retry that
-- finds the row in flight is told to wait, one with another body is
-- refused. Rows older than `retention.idempotency_hours` (24 by default)
-- no longer replay and are pruned by uptime-retention, hence the index on
-- `created_at`.
CREATE TABLE idempotency_keys (
    org_id          BIGINT NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    idempotency_key TEXT NOT NULL,
    -- SHA-256 of the method, the path with its query and the body: what
    -- "the same request" means.
    request_sha256  BYTEA NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- NULL while the first request is in flight.
    response_status SMALLINT,
    response_content_type TEXT,
    response_body   BYTEA,
    PRIMARY KEY (org_id, idempotency_key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);
