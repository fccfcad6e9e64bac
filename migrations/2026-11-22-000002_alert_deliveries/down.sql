DROP TABLE alert_delivery_attempts;
DROP TABLE alert_deliveries;
