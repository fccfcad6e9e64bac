-- The per-contact pending index for databases that never got it: commit
-- b5faf1a added it to 000002 after 000002 had first been applied somewhere,
-- so databases installed before that commit lack it, and 000003 (which
-- replaces it with alert_deliveries_pending_contact_seq_idx and drops it by
-- name) would fail on them. 000002 itself stays as it landed (with the
-- index): a landed migration is never edited.
--
-- Its version sorts between 000002 and 000003, so such a database runs it
-- before 000003 drops the index. A new database already has the index from
-- 000002, and one that already ran 000003 had it replaced on purpose: both
-- are left as they are, so every database ends with the same indexes.
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
