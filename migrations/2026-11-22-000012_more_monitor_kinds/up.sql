-- More monitor kinds (issue 12): tcp, tls, dns and icmp checks, richer http
-- checks, and heartbeats that follow a cron schedule.

-- The wider set of types. Every existing row is in it, so the new constraint
-- is added NOT VALID (no scan under the exclusive lock the swap takes) and
-- validated after, which only needs a lock that lets reads and writes go on.
ALTER TABLE monitors DROP CONSTRAINT monitors_type_check;
ALTER TABLE monitors ADD CONSTRAINT monitors_type_check
    CHECK (type IN ('http', 'keyword', 'heartbeat', 'tcp', 'tls', 'dns', 'icmp')) NOT VALID;
ALTER TABLE monitors VALIDATE CONSTRAINT monitors_type_check;

ALTER TABLE monitors
    -- What a check needs besides its target, by kind: the http request
    -- (method, headers, body, basic-auth user name), assertions, the dns
    -- query, a pinned certificate. The JSON form of the contracts'
    -- `CheckOptionsV1`; NULL: the kind's defaults (a plain GET, an A query).
    ADD COLUMN check_options JSONB,
    -- The basic-auth password: write-only, so kept apart from what the API
    -- reads back, and only ever copied into due checks.
    ADD COLUMN http_password TEXT,
    -- Heartbeats: a five-field cron expression instead of `interval_secs`,
    -- read in `heartbeat_timezone` (an IANA name; NULL: UTC).
    ADD COLUMN heartbeat_schedule TEXT,
    ADD COLUMN heartbeat_timezone TEXT,
    -- Heartbeats: when the run in progress sent its start ping (NULL: no run
    -- in progress). A success or failure ping ends the run.
    ADD COLUMN heartbeat_started_at TIMESTAMPTZ;
