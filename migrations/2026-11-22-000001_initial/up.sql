-- Users and their API keys.
CREATE TABLE users (
    id          BIGSERIAL PRIMARY KEY,
    name        TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
    id            BIGSERIAL PRIMARY KEY,
    user_id       BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    -- First 8 characters of the raw key, for people to recognise it.
    prefix        TEXT NOT NULL,
    -- Hex SHA-256 of the raw key; the raw key itself is never stored.
    key_sha256    TEXT NOT NULL UNIQUE,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_used_at  TIMESTAMPTZ,
    revoked_at    TIMESTAMPTZ
);
CREATE INDEX api_keys_user_idx ON api_keys (user_id, id);

-- Alert contacts.
CREATE TABLE alert_contacts (
    id                       BIGSERIAL PRIMARY KEY,
    user_id                  BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    type                     TEXT NOT NULL CHECK (type IN ('email', 'slack', 'webhook')),
    name                     TEXT NOT NULL,
    value                    TEXT NOT NULL,
    verified                 BOOLEAN NOT NULL DEFAULT FALSE,
    -- Hex SHA-256 of the email verification token while one is outstanding.
    verification_token_sha256 TEXT UNIQUE,
    -- `whsec_...` secret that signs webhook deliveries (webhook contacts only).
    signing_secret           TEXT,
    created_at               TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at               TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX alert_contacts_user_idx ON alert_contacts (user_id, id);

-- Monitors: definition and runtime state in one row. The api-gateway writes
-- the definition; the recorder writes the runtime state (status onwards).
CREATE TABLE monitors (
    id                    BIGSERIAL PRIMARY KEY,
    user_id               BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name                  TEXT NOT NULL,
    type                  TEXT NOT NULL CHECK (type IN ('http', 'keyword', 'heartbeat')),
    target                TEXT,
    interval_secs         INTEGER NOT NULL,
    timeout_secs          INTEGER NOT NULL,
    keyword               TEXT,
    keyword_type          TEXT CHECK (keyword_type IN ('contains', 'not_contains')),
    expected_status       INTEGER NOT NULL,
    confirmation_count    INTEGER NOT NULL,
    ssl_warn_days         INTEGER NOT NULL,
    latency_warn_ms       INTEGER,
    heartbeat_token       TEXT UNIQUE,
    active                BOOLEAN NOT NULL DEFAULT TRUE,
    created_at            TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at            TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- Runtime state.
    status                TEXT NOT NULL DEFAULT 'pending'
                          CHECK (status IN ('pending', 'up', 'degraded', 'down')),
    status_since          TIMESTAMPTZ,
    consecutive_failures  INTEGER NOT NULL DEFAULT 0,
    last_checked_at       TIMESTAMPTZ,
    last_heartbeat_at     TIMESTAMPTZ,
    ssl_expires_at        TIMESTAMPTZ,
    -- The certificate expiry a warning was last raised for (one warning per certificate).
    ssl_warned_for        TIMESTAMPTZ
);
CREATE INDEX monitors_user_idx ON monitors (user_id, id);
CREATE INDEX monitors_active_idx ON monitors (id) WHERE active;

CREATE TABLE monitor_alert_contacts (
    monitor_id  BIGINT NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
    contact_id  BIGINT NOT NULL REFERENCES alert_contacts(id) ON DELETE CASCADE,
    PRIMARY KEY (monitor_id, contact_id)
);
CREATE INDEX monitor_alert_contacts_contact_idx ON monitor_alert_contacts (contact_id);

-- Every check result. Append-only; `check_id` makes recording idempotent.
CREATE TABLE check_results (
    id              BIGSERIAL PRIMARY KEY,
    check_id        UUID NOT NULL UNIQUE,
    monitor_id      BIGINT NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
    trigger         TEXT NOT NULL CHECK (trigger IN ('scheduled', 'manual', 'heartbeat')),
    status          TEXT NOT NULL CHECK (status IN ('up', 'degraded', 'down')),
    checked_at      TIMESTAMPTZ NOT NULL,
    due_at          TIMESTAMPTZ,
    latency_ms      INTEGER,
    http_status     INTEGER,
    error           TEXT,
    ssl_expires_at  TIMESTAMPTZ,
    reporter        TEXT NOT NULL,
    recorded_at     TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- Newest-first pages per monitor: `WHERE monitor_id = $1 AND id < $cursor ORDER BY id DESC`.
CREATE INDEX check_results_monitor_idx ON check_results (monitor_id, id DESC);

-- Daily rollup kept up to date as results are recorded, so uptime reports
-- never scan raw results.
CREATE TABLE daily_uptime (
    monitor_id    BIGINT NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
    day           DATE NOT NULL,
    total_checks  INTEGER NOT NULL DEFAULT 0,
    up_checks     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (monitor_id, day)
);

-- The transactional outbox of events: written in the same transaction as the
-- state change that caused them, published to NATS afterwards.
CREATE TABLE outbox_events (
    id            UUID PRIMARY KEY,
    monitor_id    BIGINT NOT NULL,
    subject       TEXT NOT NULL,
    payload       JSONB NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    published_at  TIMESTAMPTZ
);
CREATE INDEX outbox_events_unpublished_idx ON outbox_events (created_at) WHERE published_at IS NULL;
