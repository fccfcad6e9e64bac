ALTER TABLE api_keys DROP COLUMN label_selector;
DROP INDEX monitors_labels;
ALTER TABLE monitors DROP COLUMN labels;
