-- Escalation policies: ordered steps of contacts, each with a delay, run
-- again `repeat_count` times; an open incident nobody acknowledges moves to
-- the next step when the current step's delay has passed. A monitor points
-- at a policy (monitor_escalation_policies) or at contacts directly
-- (monitor_alert_contacts), never both (the API refuses it).
CREATE TABLE escalation_policies (
    id            BIGSERIAL PRIMARY KEY,
    org_id        BIGINT NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    -- How many more times the whole policy runs after its last step (0: once).
    repeat_count  SMALLINT NOT NULL DEFAULT 0 CHECK (repeat_count BETWEEN 0 AND 9),
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX escalation_policies_org_idx ON escalation_policies (org_id, id);

-- Step `position` (0 first) of a policy: the incident waits `delay_secs` on
-- it, unacknowledged, before the next step is notified.
CREATE TABLE escalation_steps (
    policy_id   BIGINT NOT NULL REFERENCES escalation_policies(id) ON DELETE CASCADE,
    position    SMALLINT NOT NULL CHECK (position BETWEEN 0 AND 9),
    delay_secs  INTEGER NOT NULL CHECK (delay_secs BETWEEN 0 AND 86400),
    PRIMARY KEY (policy_id, position)
);

-- The contacts a step notifies. A deleted contact leaves the steps it was in.
CREATE TABLE escalation_step_contacts (
    policy_id   BIGINT NOT NULL,
    position    SMALLINT NOT NULL,
    contact_id  BIGINT NOT NULL REFERENCES alert_contacts(id) ON DELETE CASCADE,
    PRIMARY KEY (policy_id, position, contact_id),
    FOREIGN KEY (policy_id, position) REFERENCES escalation_steps (policy_id, position)
        ON DELETE CASCADE
);
CREATE INDEX escalation_step_contacts_contact_idx ON escalation_step_contacts (contact_id);

-- The policy a monitor alerts through. Its own table (keyed like
-- monitor_alert_contacts) so the notifier's intake probes one primary key per
-- event, and a monitor without a policy costs nothing more. A policy in use
-- cannot be deleted (no cascade).
CREATE TABLE monitor_escalation_policies (
    monitor_id  BIGINT PRIMARY KEY REFERENCES monitors(id) ON DELETE CASCADE,
    policy_id   BIGINT NOT NULL REFERENCES escalation_policies(id)
);
CREATE INDEX monitor_escalation_policies_policy_idx ON monitor_escalation_policies (policy_id);

-- Where the escalation of an incident of a monitor with a policy stands.
-- Written by the notifier's intake in the statement that writes the opening
-- alert's deliveries (to step 0), advanced by the notifier's escalation sweep
-- in the transaction that writes a later step's deliveries. Goes with its
-- incident (retention.incidents_days prunes resolved incidents).
CREATE TABLE incident_escalations (
    incident_id           UUID PRIMARY KEY REFERENCES incidents(id) ON DELETE CASCADE,
    -- NULL once the policy is deleted: the escalation stops.
    policy_id             BIGINT REFERENCES escalation_policies(id) ON DELETE SET NULL,
    monitor_id            BIGINT NOT NULL,
    -- The alert that opened the incident: what every later step is sent.
    payload               JSONB NOT NULL,
    -- The step notified last (0 first), in which run of the policy (0: the
    -- first), and when.
    position              SMALLINT NOT NULL,
    round                 SMALLINT NOT NULL,
    notified_at           TIMESTAMPTZ NOT NULL,
    -- When the step after it is due (`notified_at` + the step's delay);
    -- NULL once the escalation has stopped.
    next_at               TIMESTAMPTZ,
    -- Why it stopped: acknowledged, resolved, exhausted (every step and
    -- repeat notified) or no_policy.
    stopped               TEXT CHECK (stopped IN ('acknowledged', 'resolved', 'exhausted', 'no_policy')),
    -- Every contact a step notified, so the recovery and an acknowledgement
    -- reach them too (even once the monitor has left the policy).
    notified_contact_ids  BIGINT[] NOT NULL DEFAULT '{}',
    created_at            TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX incident_escalations_due_idx ON incident_escalations (next_at) WHERE next_at IS NOT NULL;

-- Acknowledgements told to on-call providers (PagerDuty, Opsgenie) travel as
-- deliveries of their own kind, written in the acknowledging transaction.
ALTER TABLE alert_deliveries DROP CONSTRAINT alert_deliveries_kind_check;
ALTER TABLE alert_deliveries ADD CONSTRAINT alert_deliveries_kind_check
    CHECK (kind IN ('alert', 'verification', 'test', 'acknowledge')) NOT VALID;
ALTER TABLE alert_deliveries VALIDATE CONSTRAINT alert_deliveries_kind_check;
