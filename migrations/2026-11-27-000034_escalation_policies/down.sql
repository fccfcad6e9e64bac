DELETE FROM alert_deliveries WHERE kind = 'acknowledge';
ALTER TABLE alert_deliveries DROP CONSTRAINT alert_deliveries_kind_check;
ALTER TABLE alert_deliveries ADD CONSTRAINT alert_deliveries_kind_check
    CHECK (kind IN ('alert', 'verification', 'test'));
DROP TABLE incident_escalations;
DROP TABLE monitor_escalation_policies;
DROP TABLE escalation_step_contacts;
DROP TABLE escalation_steps;
DROP TABLE escalation_policies;
