-- PostgreSQL's hot tables take domains for their enumerated columns and lose the foreign keys
-- that locked a merchant's and a route's row for every payment (its up.sql says why). SQLite
-- compiles CHECK constraints into each prepared statement and checks a foreign key with an
-- index lookup that locks nothing, so it keeps its table constraints and foreign keys, and
-- this migration changes nothing here. It exists so that both backends record the same
-- versions.
SELECT 1;
