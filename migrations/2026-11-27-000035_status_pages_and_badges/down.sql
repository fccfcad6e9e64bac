DROP TABLE monitor_badges;
DROP TABLE status_pages;
