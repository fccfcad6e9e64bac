ALTER TABLE check_results DROP COLUMN in_maintenance;
DROP INDEX monitors_in_maintenance_idx;
ALTER TABLE monitors
    DROP COLUMN maintenance_effect,
    DROP COLUMN maintenance_since,
    DROP COLUMN maintenance_until;
DROP TABLE maintenance_spans;
DROP TABLE maintenance_windows;
