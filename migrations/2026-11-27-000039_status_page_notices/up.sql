-- Notices: what a page's owner tells its readers about an incident (title,
-- state investigating / identified / monitoring / resolved, timestamped
-- updates), shown on the page, in its history and in its Atom feed.
-- Retention: a page keeps at most `status_pages.max_notices_per_page`
-- notices (the api-gateway deletes the oldest resolved ones in the
-- transaction that adds one past it) and a notice at most
-- `status_pages.max_updates_per_notice` updates; both die with their page.
CREATE TABLE status_page_notices (
    id           BIGSERIAL PRIMARY KEY,
    page_id      BIGINT NOT NULL REFERENCES status_pages(id) ON DELETE CASCADE,
    org_id       BIGINT NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    title        TEXT NOT NULL,
    -- The state of the newest update.
    state        TEXT NOT NULL CHECK (state IN ('investigating', 'identified', 'monitoring', 'resolved')),
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    resolved_at  TIMESTAMPTZ
);
CREATE INDEX status_page_notices_page_idx ON status_page_notices (page_id, id);

CREATE TABLE status_page_notice_updates (
    id          BIGSERIAL PRIMARY KEY,
    notice_id   BIGINT NOT NULL REFERENCES status_page_notices(id) ON DELETE CASCADE,
    state       TEXT NOT NULL CHECK (state IN ('investigating', 'identified', 'monitoring', 'resolved')),
    body        TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX status_page_notice_updates_notice_idx ON status_page_notice_updates (notice_id, id);
