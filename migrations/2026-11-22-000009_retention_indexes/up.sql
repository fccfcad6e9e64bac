-- Indexes that make each retention batch cheap (crates/uptime-retention,
-- pruning). Every batch picks at most a thousand rows past their cutoff and
-- deletes them; without these, finding them would scan the whole table on
-- every batch, and a round with nothing to do would still scan every table.
-- Plain CREATE INDEX (a migration runs in one transaction): writers of the
-- table wait while an index is built, which is short on the sizes an install
-- reaches before it upgrades to this version.

-- Settled deliveries by age (pending ones are never pruned). The predicate is
-- written exactly as the pruning query writes it, so the planner uses it.
CREATE INDEX IF NOT EXISTS alert_deliveries_settled_created_idx
    ON alert_deliveries (created_at) WHERE status IN ('delivered', 'failed');

-- Published outbox rows by publication time (unpublished ones are the relay's).
CREATE INDEX IF NOT EXISTS outbox_events_published_idx
    ON outbox_events (published_at) WHERE published_at IS NOT NULL;

-- Rollups by day. The primary key leads with monitor_id, so it cannot find
-- "every row before day D" without a full scan. Deduplication (PostgreSQL
-- 13+) stores one key per day for all monitors' rows, so this stays a small
-- fraction of the table; updates of a day's counters leave it alone (HOT).
CREATE INDEX IF NOT EXISTS daily_uptime_day_idx ON daily_uptime (day);

-- Outstanding verification tokens by when they were issued (at most then:
-- issuing one sets updated_at).
CREATE INDEX IF NOT EXISTS alert_contacts_token_age_idx
    ON alert_contacts (updated_at) WHERE verification_token_sha256 IS NOT NULL;

-- Revoked API keys by revocation time.
CREATE INDEX IF NOT EXISTS api_keys_revoked_idx
    ON api_keys (revoked_at) WHERE revoked_at IS NOT NULL;
