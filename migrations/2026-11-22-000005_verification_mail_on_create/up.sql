-- The verification email a contact is sent when it is created does not count
-- against the one-per-contact-per-interval limit (only against the user's
-- daily cap): correcting a mistyped address right after creating the contact
-- must still send a link to the corrected address.
ALTER TABLE verification_mail_log ADD COLUMN on_create BOOLEAN NOT NULL DEFAULT FALSE;
