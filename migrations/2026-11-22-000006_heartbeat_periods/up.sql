-- A heartbeat monitor's daily uptime counts periods, not pings: a passing ping
-- is one up check only when it opens a new period, so a job that pings a
-- thousand times cannot hide the one period it missed (each missed period is
-- one failed check, published by the scheduler). This is when the period of
-- the last counted ping ends; NULL: no ping counted yet.
ALTER TABLE monitors ADD COLUMN heartbeat_counted_until TIMESTAMPTZ;
