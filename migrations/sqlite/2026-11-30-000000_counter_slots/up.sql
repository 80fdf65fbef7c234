-- PostgreSQL's counter slots go from 8 to 64 in this version (a slot per connection, so
-- that concurrent transactions do not wait on one counter row). SQLite runs one writer at a
-- time, so no transaction waits on another's counters whatever its slot: it keeps its eight
-- slots, and this migration changes nothing here. It exists so that both backends record the
-- same versions.
SELECT 1;
