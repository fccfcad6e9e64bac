ALTER TABLE monitors DROP COLUMN last_latency_ms;
