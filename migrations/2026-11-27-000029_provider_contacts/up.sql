-- Alert contacts of the on-call and chat providers: PagerDuty, Opsgenie,
-- Microsoft Teams (Workflows), Discord, Telegram, ntfy and Pushover.

-- The wider set of types. Every existing row is in it, so the new constraint
-- is added NOT VALID (no scan under the exclusive lock the swap takes) and
-- validated after, which only needs a lock that lets reads and writes go on.
ALTER TABLE alert_contacts DROP CONSTRAINT alert_contacts_type_check;
ALTER TABLE alert_contacts ADD CONSTRAINT alert_contacts_type_check
    CHECK (type IN ('email', 'slack', 'webhook', 'pagerduty', 'opsgenie', 'teams',
                    'discord', 'telegram', 'ntfy', 'pushover')) NOT VALID;
ALTER TABLE alert_contacts VALIDATE CONSTRAINT alert_contacts_type_check;

ALTER TABLE alert_contacts
    -- The provider's credential (PagerDuty routing key, Opsgenie API key,
    -- Telegram bot token, Pushover application token, ntfy access token),
    -- sealed by uptime-secrets like monitors.http_password_sealed: written
    -- by the api-gateway, opened by the notifier and the api-gateway's test
    -- alert just before a request. Never returned by the API.
    ADD COLUMN secret_sealed TEXT,
    -- What a provider needs besides `value` and the secret, which is not a
    -- credential: {"region": "us"|"eu"} (opsgenie), {"server": URL} (ntfy).
    ADD COLUMN options JSONB NOT NULL DEFAULT '{}'::jsonb;
