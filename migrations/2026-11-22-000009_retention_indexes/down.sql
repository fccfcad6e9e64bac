DROP INDEX IF EXISTS api_keys_revoked_idx;
DROP INDEX IF EXISTS alert_contacts_token_age_idx;
DROP INDEX IF EXISTS daily_uptime_day_idx;
DROP INDEX IF EXISTS outbox_events_published_idx;
DROP INDEX IF EXISTS alert_deliveries_settled_created_idx;
