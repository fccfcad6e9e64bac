DROP INDEX IF EXISTS outbox_events_unpublished_seq_idx;
ALTER TABLE outbox_events DROP COLUMN seq;
