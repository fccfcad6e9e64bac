-- Results are tied to the definition they checked. `definition_version` goes
-- up by one whenever what a check does changes (type, target, timeout,
-- expected status, keyword, or a heartbeat's period); every due check and
-- result carries the version it was made for, and the recorder lets only
-- results of the current version move the monitor's state. A check already in
-- flight when its monitor changed is still stored, with its version, but it
-- says nothing about what the monitor watches now.
ALTER TABLE monitors ADD COLUMN definition_version BIGINT NOT NULL DEFAULT 1
    CHECK (definition_version >= 1);
-- NULL: recorded from a version-1 message, which carries no definition version.
ALTER TABLE check_results ADD COLUMN definition_version BIGINT;
