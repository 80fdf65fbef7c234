-- Back to table CHECK constraints and foreign keys; each is checked against the stored rows
-- again, so this fails, changing nothing, if a row breaks one.
DROP TRIGGER operations_never_deleted ON operations;
DROP TRIGGER routes_never_deleted ON routes;
DROP TRIGGER merchants_never_deleted ON merchants;
DROP FUNCTION never_deleted();

ALTER TABLE refunds
    ALTER COLUMN status TYPE SMALLINT,
    ADD CONSTRAINT refunds_status_check CHECK (status IN (1, 2, 3));

ALTER TABLE operation_counts
    ALTER COLUMN status TYPE SMALLINT,
    ADD CONSTRAINT operation_counts_status_check CHECK (status IN (1, 2, 3));

ALTER TABLE callback_outbox
    ALTER COLUMN direction TYPE TEXT,
    ALTER COLUMN state TYPE TEXT,
    ADD CONSTRAINT callback_outbox_direction_check CHECK (direction IN ('deposit', 'withdrawal')),
    ADD CONSTRAINT callback_outbox_state_check CHECK (state IN ('pending', 'delivered', 'failed')),
    ADD CONSTRAINT callback_outbox_merchant_id_fkey
        FOREIGN KEY (merchant_id) REFERENCES merchants (id),
    ADD CONSTRAINT callback_outbox_operation_id_fkey
        FOREIGN KEY (operation_id) REFERENCES operations (id);

ALTER TABLE ledger
    DROP CONSTRAINT ledger_refund_kind,
    ALTER COLUMN kind TYPE TEXT,
    ADD CONSTRAINT ledger_kind_check CHECK (kind IN ('deposit_approved', 'withdrawal_hold',
        'withdrawal_released', 'withdrawal_paid', 'manual_credit', 'manual_debit',
        'refund_hold', 'refund_released', 'refund_paid')),
    ADD CONSTRAINT ledger_refund_kind CHECK
        ((refund_id IS NOT NULL) = (kind IN ('refund_hold', 'refund_released', 'refund_paid'))),
    ADD CONSTRAINT ledger_merchant_id_fkey FOREIGN KEY (merchant_id) REFERENCES merchants (id),
    ADD CONSTRAINT ledger_operation_id_fkey FOREIGN KEY (operation_id) REFERENCES operations (id);

ALTER TABLE provider_attempts
    ALTER COLUMN state TYPE TEXT,
    ADD CONSTRAINT provider_attempts_state_check
        CHECK (state IN ('sent', 'ok', 'declined', 'unavailable', 'unknown', 'skipped')),
    ADD CONSTRAINT provider_attempts_operation_id_fkey
        FOREIGN KEY (operation_id) REFERENCES operations (id),
    ADD CONSTRAINT provider_attempts_route_id_fkey FOREIGN KEY (route_id) REFERENCES routes (id);

ALTER TABLE operations
    ALTER COLUMN direction TYPE TEXT,
    ALTER COLUMN method TYPE TEXT,
    ALTER COLUMN status TYPE SMALLINT,
    ADD CONSTRAINT operations_direction_check CHECK (direction IN ('deposit', 'withdrawal')),
    ADD CONSTRAINT operations_method_check
        CHECK (method IN ('card', 'sbp', 'sbp_qr', 'bank_a_pay', 'bank_b_pay', 'bank_c_pay')),
    ADD CONSTRAINT operations_status_check CHECK (status IN (1, 2, 3)),
    ADD CONSTRAINT operations_merchant_id_fkey FOREIGN KEY (merchant_id) REFERENCES merchants (id),
    ADD CONSTRAINT operations_route_id_fkey FOREIGN KEY (route_id) REFERENCES routes (id);

DROP DOMAIN callback_state;
DROP DOMAIN ledger_kind;
DROP DOMAIN attempt_state;
DROP DOMAIN status_code;
DROP DOMAIN method_name;
DROP DOMAIN direction_name;
