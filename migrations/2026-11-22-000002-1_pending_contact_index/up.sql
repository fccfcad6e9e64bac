-- The per-contact pending index, moved out of 000002: commit b5faf1a added it
-- to that migration after it had landed, so databases installed before that
-- commit never got it, and 000003 (which replaces it with
-- alert_deliveries_pending_contact_seq_idx and drops it by name) failed on
-- them. 000002 is back to what it was when it landed.
--
-- Its version sorts between 000002 and 000003, so a new database runs it
-- before 000003 drops the index again. A database that already ran 000003
-- runs it later (diesel runs every pending migration, oldest version first):
-- there the index was replaced on purpose and nothing is done, so every
-- database ends with the same indexes.
DO $$
BEGIN
    IF NOT EXISTS (
        SELECT 1 FROM pg_indexes
        WHERE schemaname = current_schema()
          AND indexname = 'alert_deliveries_pending_contact_seq_idx'
    ) THEN
        CREATE INDEX IF NOT EXISTS alert_deliveries_pending_contact_idx
            ON alert_deliveries (contact_id, id) WHERE status = 'pending';
    END IF;
END
$$;
