-- The checks-per-minute budget (issue 19): what a user's monitors cost to
-- run, kept by the database like the monitor count (migration 000011), so
-- the quota check reads one row instead of summing a user's monitors.
--
-- monitors.check_load_millis is what one monitor costs, in thousandths of a
-- check per minute: ceil(regions × 60,000 / interval_secs), 0 for
-- heartbeats (they are pinged, never checked). The api-gateway writes it
-- with every insert and definition update, counting NULL regions as the
-- deployment's default regions at the time of the write. Whole thousandths
-- keep every sum exact; rounding up makes a monitor cost at most one
-- thousandth more than its true load.
--
-- users.check_load_millis is the sum over the user's active monitors
-- (paused ones run no checks).
ALTER TABLE monitors ADD COLUMN check_load_millis integer NOT NULL DEFAULT 0
    CHECK (check_load_millis >= 0);
ALTER TABLE users ADD COLUMN check_load_millis bigint NOT NULL DEFAULT 0
    CHECK (check_load_millis >= 0);
-- NULL means the gateway's configured default, as for the other quotas.
ALTER TABLE user_quotas ADD COLUMN checks_per_minute bigint
    CHECK (checks_per_minute >= 0);

-- Existing monitors. The database does not know the deployment's default
-- regions, so a monitor with NULL regions is counted as one region here (the
-- only default before regions existed); the gateway writes the true cost
-- the next time the monitor is edited. This rewrites every monitor row once.
UPDATE monitors
SET check_load_millis = (coalesce(cardinality(regions), 1) * 60000 + interval_secs - 1)
                        / greatest(interval_secs, 1)
WHERE type <> 'heartbeat';

UPDATE users u SET check_load_millis = c.load
FROM (SELECT user_id, sum(check_load_millis) AS load FROM monitors
      WHERE active GROUP BY user_id) c
WHERE u.id = c.user_id;

-- Inserts and deletes: the statement-level functions of migration 000011,
-- now moving the load with the count, so a statement still updates each
-- owner's row once.
CREATE OR REPLACE FUNCTION users_count_added_monitors() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE users u SET monitor_count = u.monitor_count + c.n,
                       check_load_millis = u.check_load_millis + c.load
    FROM (SELECT user_id, count(*) AS n,
                 coalesce(sum(check_load_millis) FILTER (WHERE active), 0) AS load
          FROM added GROUP BY user_id) c
    WHERE u.id = c.user_id;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION users_count_removed_monitors() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE users u SET monitor_count = u.monitor_count - c.n,
                       check_load_millis = u.check_load_millis - c.load
    FROM (SELECT user_id, count(*) AS n,
                 coalesce(sum(check_load_millis) FILTER (WHERE active), 0) AS load
          FROM removed GROUP BY user_id) c
    WHERE u.id = c.user_id;
    RETURN NULL;
END
$$;

-- Updates: a row-level trigger on the two columns that move the load, firing
-- only when a row's contribution changes. Not statement-level like the
-- others, because PostgreSQL refuses transition tables on a trigger with a
-- column list, and without one the trigger would fire, and its transition
-- tables be captured, on every UPDATE of monitors: the recorder's batched
-- runtime-state updates (every monitor once per interval) would pay for it.
-- Measured with batches of 500 such updates: about 10% slower with a
-- statement-level trigger, unchanged with this one, which never fires for
-- them (they set neither column). Definition updates change one row per
-- statement, so one row-level update of the owner per change is the same
-- work; a statement changing many monitors' load at once updates the owner
-- once per row.
CREATE FUNCTION users_load_changed_monitor() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE users
    SET check_load_millis = check_load_millis
        + CASE WHEN NEW.active THEN NEW.check_load_millis ELSE 0 END
        - CASE WHEN OLD.active THEN OLD.check_load_millis ELSE 0 END
    WHERE id = NEW.user_id;
    RETURN NULL;
END
$$;

CREATE TRIGGER monitors_load_changed AFTER UPDATE OF active, check_load_millis ON monitors
    FOR EACH ROW
    WHEN ((CASE WHEN OLD.active THEN OLD.check_load_millis ELSE 0 END)
          IS DISTINCT FROM (CASE WHEN NEW.active THEN NEW.check_load_millis ELSE 0 END))
    EXECUTE FUNCTION users_load_changed_monitor();
