-- An idempotent replay answers the first response's headers a client relies
-- on (`Location`, `ETag`, ...: crates/api-gateway/src/idempotency.rs,
-- REPLAYED_HEADERS), not only its status, content type and body: a client
-- that timed out and retries needs the tag for its next `If-Match`. A JSON
-- array of [name, value] pairs, in the order answered; NULL for rows kept
-- before this column (replayed without them) and while in flight.
ALTER TABLE idempotency_keys ADD COLUMN response_headers JSONB;
