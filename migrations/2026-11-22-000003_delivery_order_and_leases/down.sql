ALTER TABLE alert_deliveries DROP COLUMN locked_by;
DROP INDEX alert_deliveries_pending_contact_seq_idx;
CREATE INDEX alert_deliveries_pending_contact_idx ON alert_deliveries (contact_id, id) WHERE status = 'pending';
ALTER TABLE alert_deliveries DROP COLUMN seq;
