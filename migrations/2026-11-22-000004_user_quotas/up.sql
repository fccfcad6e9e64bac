-- Abuse limits kept in the database.

-- Per-user quota overrides, set by an operator (`api-gateway set-quota`).
-- NULL means the gateway's configured default.
CREATE TABLE user_quotas (
    user_id         BIGINT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    monitors        BIGINT CHECK (monitors >= 0),
    alert_contacts  BIGINT CHECK (alert_contacts >= 0),
    api_keys        BIGINT CHECK (api_keys >= 0),
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- The on-demand check a monitor has in flight (at most one): queued by the
-- api-gateway, done once a result with its check_id is in check_results, or
-- presumed lost after the configured window.
CREATE TABLE manual_checks (
    monitor_id  BIGINT PRIMARY KEY REFERENCES monitors(id) ON DELETE CASCADE,
    check_id    UUID NOT NULL,
    queued_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Every verification email the api-gateway queued, for its limits (one per
-- contact per interval, a daily cap per user). No foreign key to the contact:
-- deleting and re-creating contacts must not reset the user's count.
CREATE TABLE verification_mail_log (
    id          BIGSERIAL PRIMARY KEY,
    user_id     BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    contact_id  BIGINT NOT NULL,
    sent_at     TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX verification_mail_log_user_idx ON verification_mail_log (user_id, sent_at);
CREATE INDEX verification_mail_log_contact_idx ON verification_mail_log (contact_id, sent_at);
