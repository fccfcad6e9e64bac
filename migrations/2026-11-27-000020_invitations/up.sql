-- Invitations to join an organisation. The invitee gets a random token
-- (shown once to the inviter, who hands it on); only the token's SHA-256
-- is stored. An invitation is accepted once, expires
-- (`invitations.expiry_days` of the api-gateway), and is pruned by
-- uptime-retention (`retention.invitations_days` after it was accepted,
-- revoked or expired).
CREATE TABLE invitations (
    id            BIGSERIAL PRIMARY KEY,
    org_id        BIGINT NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    email         TEXT NOT NULL,
    role          TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'editor', 'viewer')),
    token_sha256  TEXT NOT NULL UNIQUE,
    -- No foreign key: the invitation outlives its inviter's membership.
    invited_by    BIGINT NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at    TIMESTAMPTZ NOT NULL,
    accepted_at   TIMESTAMPTZ,
    accepted_by   BIGINT,
    revoked_at    TIMESTAMPTZ,
    -- Settled (accepted or revoked) at most once.
    CHECK (accepted_at IS NULL OR revoked_at IS NULL)
);
-- The list: an organisation's invitations by id.
CREATE INDEX invitations_org_idx ON invitations (org_id, id);
-- One open invitation per address and organisation: inviting again
-- replaces it (the earlier link stops working).
CREATE UNIQUE INDEX invitations_open_email_idx ON invitations (org_id, lower(email))
    WHERE accepted_at IS NULL AND revoked_at IS NULL;
-- Retention: settled or expired invitations by the time they ended.
CREATE INDEX invitations_ended_idx ON invitations ((coalesce(accepted_at, revoked_at, expires_at)));
