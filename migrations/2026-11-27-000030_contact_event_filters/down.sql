ALTER TABLE alert_contacts DROP COLUMN min_severity, DROP COLUMN event_kinds;
