DROP TABLE status_page_notice_updates;
DROP TABLE status_page_notices;
