-- Labels on monitors (`team: payments`, `env: prod`) and label selectors on
-- API keys.
--
-- A constant default makes the new column a catalogue change: no rewrite of
-- a million-row table. The api-gateway validates the labels (an object of at
-- most 32 bounded strings), so no CHECK scans the table here.
ALTER TABLE monitors ADD COLUMN labels JSONB NOT NULL DEFAULT '{}';

-- `labels @> '{"env": "prod"}'` (the list filter, a key's selector) from a
-- GIN index. Partial: monitors without labels, every monitor of a deployment
-- that uses none, have no entry, so the million-monitor bulk insert writes
-- nothing more to it; the queries add `labels <> '{}'` to use it. The
-- recorder's per-result updates never change `labels`, so they stay
-- heap-only (fillfactor 80, migration 000010) with this index in place.
CREATE INDEX monitors_labels ON monitors USING GIN (labels jsonb_path_ops)
    WHERE labels <> '{}'::jsonb;

-- A key may carry a label selector (an object of key -> value, all of which
-- a monitor's labels must hold): it then sees and touches only the monitors
-- it matches. NULL: every monitor of its organisation.
ALTER TABLE api_keys ADD COLUMN label_selector JSONB
    CHECK (label_selector IS NULL OR jsonb_typeof(label_selector) = 'object');
