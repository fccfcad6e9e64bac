DROP TABLE verification_mail_log;
DROP TABLE manual_checks;
DROP TABLE user_quotas;
