-- The latency of a monitor's newest check, kept by the recorder in the same
-- statement that writes last_checked_at (no extra write per result), so the
-- users' metrics endpoint (GET /api/v1/metrics) reads it from the monitor
-- row instead of probing check_results once per monitor per scrape.
-- Nullable without a default: adding it rewrites nothing.
ALTER TABLE monitors ADD COLUMN last_latency_ms integer;
