-- Organisations (issue 21): every resource a user owned is owned by an
-- organisation, and users belong to organisations with a role.
--
-- Every existing user becomes the owner of an organisation of their own
-- whose id is the user's id, so every id (monitors, contacts, keys) keeps
-- resolving and every key keeps working. Organisations take their ids from
-- the users' sequence: a user created later with a personal organisation
-- gives it the same id (`uptime_db::organisations::create_with_owner`), and
-- any other organisation takes a number no user will ever have, so the two
-- kinds never collide.
CREATE TABLE organisations (
    id                 BIGINT PRIMARY KEY DEFAULT nextval('users_id_seq'),
    name               TEXT NOT NULL,
    created_at         TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- Kept by the triggers on monitors below (formerly on users, migrations
    -- 000011 and 000014): the monitor quota and the checks-per-minute
    -- budget read one row.
    monitor_count      BIGINT NOT NULL DEFAULT 0 CHECK (monitor_count >= 0),
    check_load_millis  BIGINT NOT NULL DEFAULT 0 CHECK (check_load_millis >= 0)
);
-- The sequence now serves both tables; dropping users must not drop it.
ALTER SEQUENCE users_id_seq OWNED BY NONE;

INSERT INTO organisations (id, name, created_at, monitor_count, check_load_millis)
SELECT id, name, created_at, monitor_count, check_load_millis FROM users;

CREATE TABLE memberships (
    org_id      BIGINT NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    user_id     BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role        TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'editor', 'viewer')),
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, user_id)
);
CREATE INDEX memberships_user_idx ON memberships (user_id, org_id);

INSERT INTO memberships (org_id, user_id, role, created_at)
SELECT id, id, 'owner', created_at FROM users;

-- Monitors and alert contacts: the owner column becomes the organisation.
-- The values stay (organisation N is user N's).
ALTER TABLE monitors RENAME COLUMN user_id TO org_id;
ALTER TABLE monitors DROP CONSTRAINT monitors_user_id_fkey;
ALTER TABLE monitors ADD CONSTRAINT monitors_org_id_fkey
    FOREIGN KEY (org_id) REFERENCES organisations(id) ON DELETE CASCADE;
ALTER INDEX monitors_user_idx RENAME TO monitors_org_idx;

ALTER TABLE alert_contacts RENAME COLUMN user_id TO org_id;
ALTER TABLE alert_contacts DROP CONSTRAINT alert_contacts_user_id_fkey;
ALTER TABLE alert_contacts ADD CONSTRAINT alert_contacts_org_id_fkey
    FOREIGN KEY (org_id) REFERENCES organisations(id) ON DELETE CASCADE;
ALTER INDEX alert_contacts_user_idx RENAME TO alert_contacts_org_idx;

-- API keys belong to a member of an organisation: `user_id` stays (the
-- member who holds it), `org_id` is what it acts on. The foreign key to the
-- membership removes a member's keys with the membership.
ALTER TABLE api_keys ADD COLUMN org_id BIGINT;
UPDATE api_keys SET org_id = user_id;
ALTER TABLE api_keys ALTER COLUMN org_id SET NOT NULL;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_membership_fkey
    FOREIGN KEY (org_id, user_id) REFERENCES memberships(org_id, user_id) ON DELETE CASCADE;
CREATE INDEX api_keys_org_idx ON api_keys (org_id, id);

-- Quotas belong to the organisation.
ALTER TABLE user_quotas RENAME TO organisation_quotas;
ALTER TABLE organisation_quotas RENAME COLUMN user_id TO org_id;
ALTER TABLE organisation_quotas DROP CONSTRAINT user_quotas_user_id_fkey;
ALTER TABLE organisation_quotas ADD CONSTRAINT organisation_quotas_org_id_fkey
    FOREIGN KEY (org_id) REFERENCES organisations(id) ON DELETE CASCADE;
ALTER INDEX user_quotas_pkey RENAME TO organisation_quotas_pkey;

-- The verification mail cap is the organisation's.
ALTER TABLE verification_mail_log RENAME COLUMN user_id TO org_id;
ALTER TABLE verification_mail_log DROP CONSTRAINT verification_mail_log_user_id_fkey;
ALTER TABLE verification_mail_log ADD CONSTRAINT verification_mail_log_org_id_fkey
    FOREIGN KEY (org_id) REFERENCES organisations(id) ON DELETE CASCADE;
ALTER INDEX verification_mail_log_user_idx RENAME TO verification_mail_log_org_idx;

-- The monitor count and load move from users to organisations: the same
-- statement-level triggers on insert and delete and row-level trigger on
-- load changes (see migrations 000011 and 000014 for why each is shaped so).
DROP TRIGGER monitors_count_added ON monitors;
DROP TRIGGER monitors_count_removed ON monitors;
DROP TRIGGER monitors_load_changed ON monitors;
DROP FUNCTION users_count_added_monitors();
DROP FUNCTION users_count_removed_monitors();
DROP FUNCTION users_load_changed_monitor();

CREATE FUNCTION organisations_count_added_monitors() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE organisations o SET monitor_count = o.monitor_count + c.n,
                               check_load_millis = o.check_load_millis + c.load
    FROM (SELECT org_id, count(*) AS n,
                 coalesce(sum(check_load_millis) FILTER (WHERE active), 0) AS load
          FROM added GROUP BY org_id) c
    WHERE o.id = c.org_id;
    RETURN NULL;
END
$$;

CREATE FUNCTION organisations_count_removed_monitors() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE organisations o SET monitor_count = o.monitor_count - c.n,
                               check_load_millis = o.check_load_millis - c.load
    FROM (SELECT org_id, count(*) AS n,
                 coalesce(sum(check_load_millis) FILTER (WHERE active), 0) AS load
          FROM removed GROUP BY org_id) c
    WHERE o.id = c.org_id;
    RETURN NULL;
END
$$;

CREATE FUNCTION organisations_load_changed_monitor() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE organisations
    SET check_load_millis = check_load_millis
        + CASE WHEN NEW.active THEN NEW.check_load_millis ELSE 0 END
        - CASE WHEN OLD.active THEN OLD.check_load_millis ELSE 0 END
    WHERE id = NEW.org_id;
    RETURN NULL;
END
$$;

CREATE TRIGGER monitors_count_added AFTER INSERT ON monitors
    REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION organisations_count_added_monitors();

CREATE TRIGGER monitors_count_removed AFTER DELETE ON monitors
    REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION organisations_count_removed_monitors();

CREATE TRIGGER monitors_load_changed AFTER UPDATE OF active, check_load_millis ON monitors
    FOR EACH ROW
    WHEN ((CASE WHEN OLD.active THEN OLD.check_load_millis ELSE 0 END)
          IS DISTINCT FROM (CASE WHEN NEW.active THEN NEW.check_load_millis ELSE 0 END))
    EXECUTE FUNCTION organisations_load_changed_monitor();

ALTER TABLE users DROP COLUMN monitor_count;
ALTER TABLE users DROP COLUMN check_load_millis;
