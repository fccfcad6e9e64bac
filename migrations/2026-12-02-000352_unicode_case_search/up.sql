-- `search` (monitors, alert contacts) compares names without case in every
-- script: both sides lowered under ICU's root collation, "und-x-icu"
-- (uptime_db::SEARCH_COLLATION), because the database's own collation may
-- be C (`initdb --no-locale`), whose lower() and ILIKE fold ASCII only.
-- PostgreSQL creates "und-x-icu" when it is built with ICU (every packaged
-- build is). Without it, say so here, when upgrading, not as a failed
-- search later. Nothing is created: there is nothing to undo.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu') THEN
        RAISE EXCEPTION 'this PostgreSQL has no ICU collation "und-x-icu"; uptime needs a PostgreSQL built with ICU (search compares names without case in every script)';
    END IF;
END
$$;
