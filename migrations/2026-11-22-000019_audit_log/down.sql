DELETE FROM outbox_events WHERE monitor_id IS NULL;
ALTER TABLE outbox_events ALTER COLUMN monitor_id SET NOT NULL;
DROP TABLE audit_log;
