-- Back to one unpartitioned table with the foreign key to monitors. Results of
-- monitors deleted since cannot satisfy the key and are left out.
LOCK TABLE check_results IN ACCESS EXCLUSIVE MODE;

CREATE TABLE check_results_unpartitioned (
    id              BIGINT NOT NULL,
    check_id        UUID NOT NULL,
    monitor_id      BIGINT NOT NULL,
    trigger         TEXT NOT NULL CONSTRAINT check_results_trigger_check CHECK (trigger IN ('scheduled', 'manual', 'heartbeat')),
    status          TEXT NOT NULL CONSTRAINT check_results_status_check CHECK (status IN ('up', 'degraded', 'down')),
    checked_at      TIMESTAMPTZ NOT NULL,
    due_at          TIMESTAMPTZ,
    latency_ms      INTEGER,
    http_status     INTEGER,
    error           TEXT,
    ssl_expires_at  TIMESTAMPTZ,
    reporter        TEXT NOT NULL,
    recorded_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    definition_version BIGINT
);

ALTER SEQUENCE check_results_id_seq OWNED BY NONE;

INSERT INTO check_results_unpartitioned
    (id, check_id, monitor_id, trigger, status, checked_at, due_at, latency_ms, http_status,
     error, ssl_expires_at, reporter, recorded_at, definition_version)
SELECT r.id, r.check_id, r.monitor_id, r.trigger, r.status, r.checked_at, r.due_at,
       r.latency_ms, r.http_status, r.error, r.ssl_expires_at, r.reporter, r.recorded_at,
       r.definition_version
  FROM check_results r
 WHERE EXISTS (SELECT 1 FROM monitors m WHERE m.id = r.monitor_id);

DROP TABLE check_results;
ALTER TABLE check_results_unpartitioned RENAME TO check_results;
ALTER TABLE check_results ALTER COLUMN id SET DEFAULT nextval('check_results_id_seq');
ALTER SEQUENCE check_results_id_seq OWNED BY check_results.id;
ALTER TABLE check_results ADD CONSTRAINT check_results_pkey PRIMARY KEY (id);
ALTER TABLE check_results ADD CONSTRAINT check_results_check_id_key UNIQUE (check_id);
ALTER TABLE check_results ADD CONSTRAINT check_results_monitor_id_fkey
    FOREIGN KEY (monitor_id) REFERENCES monitors(id) ON DELETE CASCADE;
CREATE INDEX check_results_monitor_idx ON check_results (monitor_id, id DESC);
