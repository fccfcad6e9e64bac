-- Back to one owner per resource: only possible while every organisation is
-- a user's own (id = its owner's user id), as the up migration made them.
ALTER TABLE users ADD COLUMN monitor_count bigint NOT NULL DEFAULT 0 CHECK (monitor_count >= 0);
ALTER TABLE users ADD COLUMN check_load_millis bigint NOT NULL DEFAULT 0
    CHECK (check_load_millis >= 0);
UPDATE users u SET monitor_count = o.monitor_count, check_load_millis = o.check_load_millis
FROM organisations o WHERE o.id = u.id;

DROP TRIGGER monitors_count_added ON monitors;
DROP TRIGGER monitors_count_removed ON monitors;
DROP TRIGGER monitors_load_changed ON monitors;
DROP FUNCTION organisations_count_added_monitors();
DROP FUNCTION organisations_count_removed_monitors();
DROP FUNCTION organisations_load_changed_monitor();

CREATE FUNCTION users_count_added_monitors() RETURNS trigger
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

CREATE FUNCTION users_count_removed_monitors() RETURNS trigger
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

ALTER TABLE verification_mail_log DROP CONSTRAINT verification_mail_log_org_id_fkey;
ALTER INDEX verification_mail_log_org_idx RENAME TO verification_mail_log_user_idx;
ALTER TABLE verification_mail_log RENAME COLUMN org_id TO user_id;
ALTER TABLE verification_mail_log ADD CONSTRAINT verification_mail_log_user_id_fkey
    FOREIGN KEY (user_id) REFERENCES users(id) ON DELETE CASCADE;

ALTER TABLE organisation_quotas DROP CONSTRAINT organisation_quotas_org_id_fkey;
ALTER INDEX organisation_quotas_pkey RENAME TO user_quotas_pkey;
ALTER TABLE organisation_quotas RENAME COLUMN org_id TO user_id;
ALTER TABLE organisation_quotas RENAME TO user_quotas;
ALTER TABLE user_quotas ADD CONSTRAINT user_quotas_user_id_fkey
    FOREIGN KEY (user_id) REFERENCES users(id) ON DELETE CASCADE;

DROP INDEX api_keys_org_idx;
ALTER TABLE api_keys DROP CONSTRAINT api_keys_membership_fkey;
ALTER TABLE api_keys DROP COLUMN org_id;

ALTER TABLE alert_contacts DROP CONSTRAINT alert_contacts_org_id_fkey;
ALTER INDEX alert_contacts_org_idx RENAME TO alert_contacts_user_idx;
ALTER TABLE alert_contacts RENAME COLUMN org_id TO user_id;
ALTER TABLE alert_contacts ADD CONSTRAINT alert_contacts_user_id_fkey
    FOREIGN KEY (user_id) REFERENCES users(id) ON DELETE CASCADE;

ALTER TABLE monitors DROP CONSTRAINT monitors_org_id_fkey;
ALTER INDEX monitors_org_idx RENAME TO monitors_user_idx;
ALTER TABLE monitors RENAME COLUMN org_id TO user_id;
ALTER TABLE monitors ADD CONSTRAINT monitors_user_id_fkey
    FOREIGN KEY (user_id) REFERENCES users(id) ON DELETE CASCADE;

CREATE TRIGGER monitors_count_added AFTER INSERT ON monitors
    REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION users_count_added_monitors();
CREATE TRIGGER monitors_count_removed AFTER DELETE ON monitors
    REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION users_count_removed_monitors();
CREATE TRIGGER monitors_load_changed AFTER UPDATE OF active, check_load_millis ON monitors
    FOR EACH ROW
    WHEN ((CASE WHEN OLD.active THEN OLD.check_load_millis ELSE 0 END)
          IS DISTINCT FROM (CASE WHEN NEW.active THEN NEW.check_load_millis ELSE 0 END))
    EXECUTE FUNCTION users_load_changed_monitor();

DROP TABLE memberships;
DROP TABLE organisations;
ALTER SEQUENCE users_id_seq OWNED BY users.id;
