-- Sealed passwords are lost: monitors with basic auth need theirs restated.
DROP INDEX monitors_sealed_password;
DROP INDEX monitors_plaintext_password;
ALTER TABLE monitors DROP COLUMN http_password_sealed;
