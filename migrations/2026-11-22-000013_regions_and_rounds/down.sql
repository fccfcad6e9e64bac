DROP TABLE check_rounds;
ALTER TABLE check_results DROP COLUMN round_id, DROP COLUMN region;
ALTER TABLE monitors DROP COLUMN quorum, DROP COLUMN regions;
