-- A counter slot per connection. Each unit of work adds to one slot of the overview's
-- counters; two transactions wait on one counter row only if they add to the same slot.
-- Drawn at random from eight, any two concurrent ones shared a slot with a chance of one in
-- eight, and the second waited for the first's commit. The gateway now adds to its
-- connection's own slot, which its pool numbers one after another: a connection runs one
-- transaction at a time, and two connections of one pool share a slot only if it opened 64
-- connections between them (those of two gateways may). Readers sum the slots as before;
-- the rows a minute's counters take grow with the connections that write them.
ALTER TABLE operation_counts DROP CONSTRAINT operation_counts_slot_check;
ALTER TABLE operation_counts ADD CONSTRAINT operation_counts_slot_check
    CHECK (slot BETWEEN 0 AND 63);
