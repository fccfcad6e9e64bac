DELETE FROM alert_contacts
    WHERE type NOT IN ('email', 'slack', 'webhook');
ALTER TABLE alert_contacts DROP COLUMN options, DROP COLUMN secret_sealed;
ALTER TABLE alert_contacts DROP CONSTRAINT alert_contacts_type_check;
ALTER TABLE alert_contacts ADD CONSTRAINT alert_contacts_type_check
    CHECK (type IN ('email', 'slack', 'webhook'));
