DROP TABLE outbox_events;
DROP TABLE daily_uptime;
DROP TABLE check_results;
DROP TABLE monitor_alert_contacts;
DROP TABLE monitors;
DROP TABLE alert_contacts;
DROP TABLE api_keys;
DROP TABLE users;
