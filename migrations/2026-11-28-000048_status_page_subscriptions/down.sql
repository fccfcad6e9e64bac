DROP TABLE status_page_mails;
DROP TABLE status_page_subscribers;
