-- Status pages: a public (or token-protected) page per slug that shows
-- chosen monitors' names and states, served by the status-pages service
-- from an in-memory snapshot (it reads these tables in one set of queries
-- per refresh, never per view). An organisation holds at most
-- `status_pages.max_pages_per_org` of them (api-gateway setting), and a
-- page dies with its organisation, so the table does not grow on its own.
CREATE TABLE status_pages (
    id                   BIGSERIAL PRIMARY KEY,
    org_id               BIGINT NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    -- The page's path: /status/{slug}. Unique across organisations.
    slug                 TEXT NOT NULL UNIQUE,
    title                TEXT NOT NULL,
    description          TEXT,
    logo_url             TEXT,
    -- A host name routed to this page by the Host header (lowercase).
    custom_domain        TEXT UNIQUE,
    -- The monitors shown, in named groups, in order:
    -- [{"name": "...", "monitor_ids": [..], "selector": {"key": "value"}|null}]
    -- (bounded by the api-gateway: groups, ids per group, selector terms).
    groups               JSONB NOT NULL DEFAULT '[]',
    -- A private page is shown only with its access token; only the token's
    -- SHA-256 is kept (NULL: the page is public).
    access_token_sha256  TEXT,
    created_at           TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at           TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX status_pages_org_idx ON status_pages (org_id, id);

-- Badge tokens: the unguessable name of a monitor in its badge URLs
-- (/badge/{token}/status.svg), stored as the token's SHA-256. One per
-- monitor at most (rotating replaces it); dies with its monitor.
CREATE TABLE monitor_badges (
    monitor_id    BIGINT PRIMARY KEY REFERENCES monitors(id) ON DELETE CASCADE,
    org_id        BIGINT NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    token_sha256  TEXT NOT NULL UNIQUE,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);
