-- What each contact receives: the kinds of alerts it wants and the least
-- severe it wants, applied by the notifier's intake (a filtered-out alert
-- makes no delivery at all).
ALTER TABLE alert_contacts
    -- Alert event types (`monitor.down`, `monitor.up`, `monitor.degraded`,
    -- `ssl.expiring`); NULL: every kind, including kinds added later.
    ADD COLUMN event_kinds TEXT[],
    -- The least severity delivered: 0 info, 1 warning, 2 critical
    -- (uptime_alerts::incident::Severity; a recovery is as severe as the
    -- outage it ends). 0 (the default) delivers everything.
    ADD COLUMN min_severity SMALLINT NOT NULL DEFAULT 0
        CHECK (min_severity BETWEEN 0 AND 2);
