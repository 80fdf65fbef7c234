-- Card data already stored: card numbers inside the user data of every operation and inside
-- the requisites of every deposit are masked, and their entries named like a card security
-- code (`cvc`, `cvv`, `cvv2`, `cvc2`, `cid`) dropped. SQL cannot find a card number inside
-- text (it takes the Luhn check over windows of digit groups), so this migration only records
-- the work as a pending data step; the gateway does it right after migrating, with the same
-- rules as for new requests, in batches of rows, each batch in a transaction of its own.

-- Work on stored rows that the gateway does after the migrations. `progress` is the key of
-- the last row done (the step goes on from there after a crash), `rows_changed` how many rows
-- it has changed so far, `done_at` (milliseconds since the epoch) NULL while it is pending.
CREATE TABLE data_steps (
    name         TEXT PRIMARY KEY NOT NULL,
    progress     TEXT,
    rows_changed BIGINT NOT NULL DEFAULT 0,
    done_at      BIGINT
);

INSERT INTO data_steps (name) VALUES ('card_scrub');
