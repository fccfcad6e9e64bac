DROP TRIGGER IF EXISTS monitors_count_removed ON monitors;
DROP TRIGGER IF EXISTS monitors_count_added ON monitors;
DROP FUNCTION IF EXISTS users_count_removed_monitors();
DROP FUNCTION IF EXISTS users_count_added_monitors();
ALTER TABLE users DROP COLUMN IF EXISTS monitor_count;
