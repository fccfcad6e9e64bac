-- The up migration only checks that the collation exists.
SELECT 1;
