-- The relay sends a monitor's events in the order they were written. Two
-- events of one monitor can be written by one transaction (a batch holding
-- pending -> up and up -> down), so they share `created_at` (the transaction's
-- start), and the random UUID `id` cannot order them. A sequence taken at
-- insert time can: rows of one monitor are inserted under its row lock, so
-- their `seq` follows the order the state machine produced them in, within
-- a transaction and across transactions. The table holds only recent events
-- (retention prunes published rows), so adding the column rewrites little.
ALTER TABLE outbox_events ADD COLUMN seq BIGSERIAL NOT NULL;
CREATE INDEX outbox_events_unpublished_seq_idx ON outbox_events (seq) WHERE published_at IS NULL;
