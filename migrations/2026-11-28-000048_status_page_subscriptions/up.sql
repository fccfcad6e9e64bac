-- Email subscriptions to status pages, with double opt-in, and the mails
-- they are sent (a transactional outbox the notifier drains).
--
-- A subscriber is written by the status-pages service (a visitor's
-- subscribe request) together with its confirmation mail, in one
-- transaction; it is confirmed only by the link of that mail. At most
-- `status_pages.max_subscribers_per_page` per page (status-pages setting,
-- pending ones included). Retention: a subscription still unconfirmed
-- `retention.pending_subscription_hours` after it was made is deleted
-- (uptime-retention); unsubscribing deletes the row at once; a page takes
-- its subscribers with it.
--
-- The address is personal data and stored as given (not sealed), like
-- `alert_contacts.value` and `invitations.email`: the notifier needs it in
-- clear text to send, the owner's API lists it. It is never logged and
-- never shown on a public route (docs/architecture.md says why).
CREATE TABLE status_page_subscribers (
    id                     BIGSERIAL PRIMARY KEY,
    page_id                BIGINT NOT NULL REFERENCES status_pages(id) ON DELETE CASCADE,
    org_id                 BIGINT NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    email                  TEXT NOT NULL,
    -- The confirmation link's token, as its SHA-256; NULL once confirmed.
    confirm_token_sha256   TEXT UNIQUE,
    -- The one-click unsubscribe token (random, 256 bits), kept as issued:
    -- every mail to the subscriber carries it, long after the
    -- subscription was made, and all it can do is end this subscription.
    unsubscribe_token      TEXT NOT NULL UNIQUE,
    created_at             TIMESTAMPTZ NOT NULL DEFAULT now(),
    confirmed_at           TIMESTAMPTZ,
    CHECK ((confirmed_at IS NULL) <> (confirm_token_sha256 IS NULL))
);
-- One subscription per address and page (a repeated request changes nothing).
CREATE UNIQUE INDEX status_page_subscribers_email_idx
    ON status_page_subscribers (page_id, lower(email));
-- The owner's list, and a notice's fan-out to the confirmed ones.
CREATE INDEX status_page_subscribers_page_idx
    ON status_page_subscribers (page_id, id);
-- Retention: pending subscriptions by age.
CREATE INDEX status_page_subscribers_pending_idx
    ON status_page_subscribers (created_at) WHERE confirmed_at IS NULL;

-- The mails to subscribers: a confirmation per subscription, and one mail
-- per (notice update, confirmed subscriber), written in the transaction
-- that posts the notice or its update (the unique key makes it once,
-- whatever is retried). The notifier claims due rows with a lease,
-- retries with its backoff and marks a mail `failed` past
-- `notifier.give_up_after_secs` (the dead letters, kept for reading).
-- Retention: sent and failed rows go `retention.status_page_mails_days`
-- after they were written; a subscriber's rows go with it.
CREATE TABLE status_page_mails (
    id                UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    subscriber_id     BIGINT NOT NULL REFERENCES status_page_subscribers(id) ON DELETE CASCADE,
    kind              TEXT NOT NULL CHECK (kind IN ('confirmation', 'notice')),
    notice_update_id  BIGINT REFERENCES status_page_notice_updates(id) ON DELETE CASCADE,
    -- What the mail says (page and notice text, the links' base URL; a
    -- confirmation's token until the mail is settled).
    payload           JSONB NOT NULL,
    status            TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
    attempts          INTEGER NOT NULL DEFAULT 0,
    last_error        TEXT,
    next_attempt_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    locked_until      TIMESTAMPTZ,
    locked_by         TEXT,
    created_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    sent_at           TIMESTAMPTZ,
    CHECK ((kind = 'notice') = (notice_update_id IS NOT NULL))
);
CREATE UNIQUE INDEX status_page_mails_once_idx
    ON status_page_mails (notice_update_id, subscriber_id) WHERE notice_update_id IS NOT NULL;
CREATE INDEX status_page_mails_due_idx
    ON status_page_mails (next_attempt_at) WHERE status = 'pending';
CREATE INDEX status_page_mails_subscriber_idx ON status_page_mails (subscriber_id);
CREATE INDEX status_page_mails_settled_idx
    ON status_page_mails (created_at) WHERE status <> 'pending';
