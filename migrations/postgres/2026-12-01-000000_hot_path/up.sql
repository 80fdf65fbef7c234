-- The rules of the hot tables, checked at a lower cost per statement. Every value a column
-- refused it still refuses, and nothing stored is rewritten.
--
-- 1. Enumerated columns take a domain. PostgreSQL keeps a table's CHECK constraints as node
--    text, and every statement that writes the table parses each of them again and prepares
--    it: for a row or two per statement (a payment at a steady rate), the lists of names
--    (`method IN (...)`, `kind IN (...)`) cost about as much as the row itself. A domain's
--    constraint is parsed once per connection and kept with the type (it is still prepared
--    per statement). The columns take an unconstrained domain first (a binary-coercible
--    change: no rewrite, and only the partial indexes that name the column are rebuilt),
--    then the domain's constraint is added, which checks every stored value once.
--
-- 2. Rows that others point at are never deleted. A foreign key to merchants, routes or
--    operations checked each new payment, attempt, ledger entry and queued callback with a
--    query that also locked the parent row (`FOR KEY SHARE`): one locking write to the same
--    merchant and route rows per payment, which concurrent payments share as a multixact.
--    These parents are never deleted, nor their ids changed; a trigger now makes that the
--    rule, so no stored row can be left pointing at a missing one. What the database no
--    longer checks is a new child's parent: the gateway writes each with its parent, or
--    after reading it. The foreign keys of rarely written rows (balances, refunds, keys,
--    attempts' discrepancies) stay.
--
-- Everything here is one transaction, which holds an exclusive lock on each altered table
-- (and on merchants and routes, whose foreign-key triggers go) until it commits.

CREATE DOMAIN direction_name AS TEXT;
CREATE DOMAIN method_name AS TEXT;
CREATE DOMAIN status_code AS SMALLINT;
CREATE DOMAIN attempt_state AS TEXT;
CREATE DOMAIN ledger_kind AS TEXT;
CREATE DOMAIN callback_state AS TEXT;

ALTER TABLE operations
    DROP CONSTRAINT operations_direction_check,
    DROP CONSTRAINT operations_method_check,
    DROP CONSTRAINT operations_status_check,
    DROP CONSTRAINT operations_merchant_id_fkey,
    DROP CONSTRAINT operations_route_id_fkey,
    ALTER COLUMN direction TYPE direction_name,
    ALTER COLUMN method TYPE method_name,
    ALTER COLUMN status TYPE status_code;

ALTER TABLE provider_attempts
    DROP CONSTRAINT provider_attempts_state_check,
    DROP CONSTRAINT provider_attempts_operation_id_fkey,
    DROP CONSTRAINT provider_attempts_route_id_fkey,
    ALTER COLUMN state TYPE attempt_state;

ALTER TABLE ledger
    DROP CONSTRAINT ledger_kind_check,
    DROP CONSTRAINT ledger_refund_kind,
    DROP CONSTRAINT ledger_merchant_id_fkey,
    DROP CONSTRAINT ledger_operation_id_fkey,
    ALTER COLUMN kind TYPE ledger_kind,
    -- Refund entries, and only they, name their refund (every refund kind starts so).
    ADD CONSTRAINT ledger_refund_kind
        CHECK ((refund_id IS NOT NULL) = starts_with(kind, 'refund_'));

ALTER TABLE callback_outbox
    DROP CONSTRAINT callback_outbox_direction_check,
    DROP CONSTRAINT callback_outbox_state_check,
    DROP CONSTRAINT callback_outbox_merchant_id_fkey,
    DROP CONSTRAINT callback_outbox_operation_id_fkey,
    ALTER COLUMN direction TYPE direction_name,
    ALTER COLUMN state TYPE callback_state;

ALTER TABLE operation_counts
    DROP CONSTRAINT operation_counts_status_check,
    ALTER COLUMN status TYPE status_code;

ALTER TABLE refunds
    DROP CONSTRAINT refunds_status_check,
    ALTER COLUMN status TYPE status_code;

-- The rules themselves, as they were; each checks the stored values once.
ALTER DOMAIN direction_name ADD CONSTRAINT direction_name_check
    CHECK (VALUE IN ('deposit', 'withdrawal'));
ALTER DOMAIN method_name ADD CONSTRAINT method_name_check
    CHECK (VALUE IN ('card', 'sbp', 'sbp_qr', 'bank_a_pay', 'bank_b_pay', 'bank_c_pay'));
ALTER DOMAIN status_code ADD CONSTRAINT status_code_check
    CHECK (VALUE IN (1, 2, 3));
ALTER DOMAIN attempt_state ADD CONSTRAINT attempt_state_check
    CHECK (VALUE IN ('sent', 'ok', 'declined', 'unavailable', 'unknown', 'skipped'));
ALTER DOMAIN ledger_kind ADD CONSTRAINT ledger_kind_check
    CHECK (VALUE IN ('deposit_approved', 'withdrawal_hold', 'withdrawal_released',
        'withdrawal_paid', 'manual_credit', 'manual_debit', 'refund_hold', 'refund_released',
        'refund_paid'));
ALTER DOMAIN callback_state ADD CONSTRAINT callback_state_check
    CHECK (VALUE IN ('pending', 'delivered', 'failed'));

-- Parents that are never deleted, nor renumbered: any statement that would is refused.
CREATE FUNCTION never_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% rows are never deleted, nor their ids changed', TG_TABLE_NAME;
END
$$;

CREATE TRIGGER merchants_never_deleted BEFORE DELETE OR TRUNCATE OR UPDATE OF id ON merchants
    FOR EACH STATEMENT EXECUTE FUNCTION never_deleted();
CREATE TRIGGER routes_never_deleted BEFORE DELETE OR TRUNCATE OR UPDATE OF id ON routes
    FOR EACH STATEMENT EXECUTE FUNCTION never_deleted();
CREATE TRIGGER operations_never_deleted BEFORE DELETE OR TRUNCATE OR UPDATE OF id ON operations
    FOR EACH STATEMENT EXECUTE FUNCTION never_deleted();
