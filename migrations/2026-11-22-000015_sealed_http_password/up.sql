-- Issue 19: an http monitor's basic-auth password is kept sealed
-- (AES-256-GCM by uptime-secrets: `v1.<key id>.<base64url>`), never in plain
-- text. The api-gateway writes only this column. At its start it seals what
-- `http_password` still holds (rows written before this migration), clearing
-- that column, and re-seals values sealed with a key other than the current
-- one (key rotation). `http_password` stays for that job; a later migration
-- drops it once every deployment has run it.
ALTER TABLE monitors ADD COLUMN http_password_sealed text;

-- The start-up job's two searches, each over the few rows it concerns
-- rather than the whole table. Neither index covers a column the recorder
-- updates, so its runtime updates stay heap-only (migration 000010).
CREATE INDEX monitors_plaintext_password ON monitors (id) WHERE http_password IS NOT NULL;
CREATE INDEX monitors_sealed_password ON monitors (id) WHERE http_password_sealed IS NOT NULL;
