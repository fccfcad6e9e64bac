ALTER TABLE monitors RESET (fillfactor);
ALTER TABLE daily_uptime RESET (fillfactor);
