DROP TABLE invitations;
