-- A contact's alerts go out in the order they were created. The claim used to
-- compare random UUIDs to find an "older" pending delivery, so a recovery
-- could overtake the outage it ends. `seq` is the creation order: a sequence
-- value taken when the row is inserted (existing rows numbered by creation).
ALTER TABLE alert_deliveries ADD COLUMN seq BIGINT;
UPDATE alert_deliveries d SET seq = o.n
FROM (SELECT id, row_number() OVER (ORDER BY created_at, id) AS n FROM alert_deliveries) o
WHERE d.id = o.id;
CREATE SEQUENCE alert_deliveries_seq_seq OWNED BY alert_deliveries.seq;
SELECT setval('alert_deliveries_seq_seq', COALESCE((SELECT max(seq) FROM alert_deliveries), 0) + 1, false);
ALTER TABLE alert_deliveries
    ALTER COLUMN seq SET DEFAULT nextval('alert_deliveries_seq_seq'),
    ALTER COLUMN seq SET NOT NULL;

-- Serves the claim's ordering check (is an older delivery to this contact
-- still pending?) by creation order instead of by id.
DROP INDEX alert_deliveries_pending_contact_idx;
CREATE INDEX alert_deliveries_pending_contact_seq_idx ON alert_deliveries (contact_id, seq) WHERE status = 'pending';

-- Which notifier holds the lease (`locked_until`): it renews its own leases
-- while a send is in progress, and a restarted notifier releases the leases
-- its previous life left behind instead of waiting for them to run out.
ALTER TABLE alert_deliveries ADD COLUMN locked_by TEXT;
