ALTER TABLE check_results DROP COLUMN definition_version;
ALTER TABLE monitors DROP COLUMN definition_version;
