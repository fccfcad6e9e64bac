DROP TABLE incidents;
