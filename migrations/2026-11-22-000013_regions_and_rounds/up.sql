-- Checks from several regions, decided by quorum (issue 13).

-- The regions a monitor is checked from and how many of them must see a
-- failure for a round to fail. NULL regions: the deployment's default
-- regions (`regions.default`); NULL quorum: a majority of the regions.
ALTER TABLE monitors
    ADD COLUMN regions TEXT[],
    ADD COLUMN quorum INT CHECK (quorum >= 1);

-- Every result names where it ran and the round it was part of. NULL
-- region: recorded before regions existed (the default region); NULL
-- round: a heartbeat, or recorded before rounds.
ALTER TABLE check_results
    ADD COLUMN region TEXT,
    ADD COLUMN round_id UUID;

-- The rounds of monitors checked from several regions, while they are
-- being answered and after they were decided. A round of one region is
-- decided by its one result and never written here.
CREATE TABLE check_rounds (
    round_id            UUID PRIMARY KEY,
    monitor_id          BIGINT NOT NULL REFERENCES monitors (id) ON DELETE CASCADE,
    definition_version  BIGINT NOT NULL,
    trigger             TEXT NOT NULL CHECK (trigger IN ('scheduled', 'manual')),
    due_at              TIMESTAMPTZ NOT NULL,
    -- When the round is decided even if some region has not answered.
    deadline_at         TIMESTAMPTZ NOT NULL,
    regions             TEXT[] NOT NULL,
    quorum              INT NOT NULL CHECK (quorum >= 1),
    -- What each region answered so far: {"<region>": <CheckResultV3>}.
    answers             JSONB NOT NULL DEFAULT '{}'::jsonb,
    decided_at          TIMESTAMPTZ,
    -- The decided round (RoundV1) and the verdict it gave.
    verdict             TEXT CHECK (verdict IN ('up', 'degraded', 'down')),
    decision            JSONB,
    created_at          TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- The recorder's sweep of rounds past their deadline.
CREATE INDEX check_rounds_undecided_idx ON check_rounds (deadline_at) WHERE decided_at IS NULL;
-- Retention: decided rounds by age.
CREATE INDEX check_rounds_decided_idx ON check_rounds (decided_at) WHERE decided_at IS NOT NULL;
-- A monitor's rounds, newest first (the API).
CREATE INDEX check_rounds_monitor_idx ON check_rounds (monitor_id, due_at DESC);
