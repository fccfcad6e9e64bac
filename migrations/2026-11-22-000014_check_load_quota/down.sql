DROP TRIGGER IF EXISTS monitors_load_changed ON monitors;
DROP FUNCTION IF EXISTS users_load_changed_monitor();

-- The functions as migration 000011 created them.
CREATE OR REPLACE FUNCTION users_count_added_monitors() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE users u SET monitor_count = u.monitor_count + c.n
    FROM (SELECT user_id, count(*) AS n FROM added GROUP BY user_id) c
    WHERE u.id = c.user_id;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION users_count_removed_monitors() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE users u SET monitor_count = u.monitor_count - c.n
    FROM (SELECT user_id, count(*) AS n FROM removed GROUP BY user_id) c
    WHERE u.id = c.user_id;
    RETURN NULL;
END
$$;

ALTER TABLE user_quotas DROP COLUMN IF EXISTS checks_per_minute;
ALTER TABLE users DROP COLUMN IF EXISTS check_load_millis;
ALTER TABLE monitors DROP COLUMN IF EXISTS check_load_millis;
