-- How many monitors each user owns, kept by the database in the same
-- transaction as every insert and delete, so the quota check reads one row
-- instead of counting the user's monitors. Counting was a scan of every
-- monitor of the user on each create: at a million monitors, over 100 ms per
-- request (in parallel workers) while the user's row was locked, which made
-- creating them through the bulk API slower with every batch.
--
-- Statement-level triggers with transition tables: a bulk insert of a
-- thousand monitors updates its owner's row once, not a thousand times.
-- Monitors never change owner (no statement updates monitors.user_id), so
-- inserts and deletes are all that move the count; the recorder's updates
-- of runtime state fire nothing.
ALTER TABLE users ADD COLUMN monitor_count bigint NOT NULL DEFAULT 0
    CHECK (monitor_count >= 0);

UPDATE users u SET monitor_count = c.n
FROM (SELECT user_id, count(*) AS n FROM monitors GROUP BY user_id) c
WHERE u.id = c.user_id;

CREATE FUNCTION users_count_added_monitors() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE users u SET monitor_count = u.monitor_count + c.n
    FROM (SELECT user_id, count(*) AS n FROM added GROUP BY user_id) c
    WHERE u.id = c.user_id;
    RETURN NULL;
END
$$;

CREATE FUNCTION users_count_removed_monitors() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE users u SET monitor_count = u.monitor_count - c.n
    FROM (SELECT user_id, count(*) AS n FROM removed GROUP BY user_id) c
    WHERE u.id = c.user_id;
    RETURN NULL;
END
$$;

CREATE TRIGGER monitors_count_added AFTER INSERT ON monitors
    REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION users_count_added_monitors();

CREATE TRIGGER monitors_count_removed AFTER DELETE ON monitors
    REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION users_count_removed_monitors();
