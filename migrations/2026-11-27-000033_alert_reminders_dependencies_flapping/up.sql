-- Reminders, dependencies and flapping (docs/architecture.md, "How a
-- transition becomes, or does not become, an alert").
--
-- On monitors, the rules (NULL or empty: the feature is off for the monitor,
-- and the recorder does nothing for it) and the flapping state the recorder
-- keeps. Every column is nullable or has a constant default: adding them
-- rewrites nothing.
ALTER TABLE monitors
    -- Repeat the down alert every this many seconds while the incident is
    -- open and unacknowledged.
    ADD COLUMN reminder_interval_secs integer,
    -- At most this many reminders per incident (NULL: until acknowledged or
    -- recovered).
    ADD COLUMN reminder_max integer,
    -- Monitors of the same organisation this one depends on: while one of
    -- them is down (or failing towards down) this one's alerts are held.
    ADD COLUMN depends_on bigint[] NOT NULL DEFAULT '{}',
    -- Flapping: more than `flap_threshold` status changes within
    -- `flap_window_secs` (NULL: the default) starts it; no change for
    -- `flap_stable_secs` (NULL: the default) ends it.
    ADD COLUMN flap_threshold integer,
    ADD COLUMN flap_window_secs integer,
    ADD COLUMN flap_stable_secs integer,
    -- The recorder's flapping state: the times of the recent status changes
    -- (only kept for monitors with a threshold) and since when the monitor
    -- is flapping.
    ADD COLUMN flap_changes timestamptz[],
    ADD COLUMN flapping_since timestamptz;
-- The sweeper finds the flapping monitors that became stable here.
CREATE INDEX monitors_flapping_idx ON monitors (flapping_since) WHERE flapping_since IS NOT NULL;

-- On incidents, what happened to their down alert.
ALTER TABLE incidents
    -- Why the down alert is held now (NULL: it went out, or was released).
    ADD COLUMN alert_held text CHECK (alert_held IN ('blocked_by_parent', 'flapping', 'maintenance')),
    -- The monitors it depends on that were down (or failing) when it went down.
    ADD COLUMN blocked_by bigint[] NOT NULL DEFAULT '{}',
    -- How many monitors depending on this one had their alerts held behind
    -- it when it went down.
    ADD COLUMN held_children integer NOT NULL DEFAULT 0,
    ADD COLUMN reminders_sent integer NOT NULL DEFAULT 0,
    -- When the next reminder is due (NULL: none will be sent).
    ADD COLUMN next_reminder_at timestamptz;
-- The sweeper's two questions, each over open incidents only.
CREATE INDEX incidents_reminder_due_idx ON incidents (next_reminder_at)
    WHERE resolved_at IS NULL AND next_reminder_at IS NOT NULL;
CREATE INDEX incidents_held_idx ON incidents (monitor_id)
    WHERE resolved_at IS NULL AND alert_held IS NOT NULL;
