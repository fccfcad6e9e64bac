ALTER TABLE monitors DROP COLUMN heartbeat_counted_until;
