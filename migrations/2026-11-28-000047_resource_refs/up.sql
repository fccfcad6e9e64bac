-- A caller-chosen stable name per resource ("monitoring as code": a file,
-- a Kubernetes resource or a Terraform provider names what it manages by
-- its ref, never by the server's id). Optional (hand-made resources have
-- none), unique per organisation and kind, immutable once set (the API's
-- rule). The syntax (1-255 of [a-z0-9._-], alphanumeric at both ends) is
-- the API's too; the CHECK keeps a bad value out whatever writes it.
ALTER TABLE monitors ADD COLUMN ref TEXT
    CHECK (ref ~ '^[a-z0-9]([a-z0-9._-]{0,253}[a-z0-9])?$');
ALTER TABLE alert_contacts ADD COLUMN ref TEXT
    CHECK (ref ~ '^[a-z0-9]([a-z0-9._-]{0,253}[a-z0-9])?$');
ALTER TABLE maintenance_windows ADD COLUMN ref TEXT
    CHECK (ref ~ '^[a-z0-9]([a-z0-9._-]{0,253}[a-z0-9])?$');
ALTER TABLE status_pages ADD COLUMN ref TEXT
    CHECK (ref ~ '^[a-z0-9]([a-z0-9._-]{0,253}[a-z0-9])?$');
ALTER TABLE escalation_policies ADD COLUMN ref TEXT
    CHECK (ref ~ '^[a-z0-9]([a-z0-9._-]{0,253}[a-z0-9])?$');

-- Partial: only resources with a ref take part (and take room); the index
-- also serves the lookup by ref (PUT by-ref, apply's resolution).
CREATE UNIQUE INDEX monitors_org_ref_key ON monitors (org_id, ref) WHERE ref IS NOT NULL;
CREATE UNIQUE INDEX alert_contacts_org_ref_key ON alert_contacts (org_id, ref) WHERE ref IS NOT NULL;
CREATE UNIQUE INDEX maintenance_windows_org_ref_key ON maintenance_windows (org_id, ref) WHERE ref IS NOT NULL;
CREATE UNIQUE INDEX status_pages_org_ref_key ON status_pages (org_id, ref) WHERE ref IS NOT NULL;
CREATE UNIQUE INDEX escalation_policies_org_ref_key ON escalation_policies (org_id, ref) WHERE ref IS NOT NULL;
