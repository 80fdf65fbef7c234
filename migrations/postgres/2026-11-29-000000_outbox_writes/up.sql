-- Fewer index writes on the delivery path.
--
-- Room for every claim to be written in place. A claim takes due callbacks oldest first, so
-- it leases every row of a page together, and each leased row needs room for its new
-- version on its own page for the update to be HOT (no new entry in any index). At
-- `fillfactor = 70` a page of callbacks (about 480 bytes each) kept room for 4 or 5 of its
-- 11 rows: about half of the claims wrote a new entry into every index of the outbox, and
-- left a dead one in `callback_outbox_due` for the next claim to step over. Filled to 45 %,
-- a page keeps room for a new version of each of its rows. The outbox takes about twice the
-- space of a packed table; pages written before this change keep their old filling.
ALTER TABLE callback_outbox SET (fillfactor = 45);

-- Each time a callback was queued or recorded (a delivery writes a new row version: it takes
-- the row out of `callback_outbox_due`), it also wrote an entry into this index of text
-- keys. Only an operation's timeline read it, and it finds the same rows by their keys: the
-- operation's own id and its refunds' ids (`refunds_operation`).
DROP INDEX callback_outbox_operation;
