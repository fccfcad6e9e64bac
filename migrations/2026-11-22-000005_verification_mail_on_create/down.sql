ALTER TABLE verification_mail_log DROP COLUMN on_create;
