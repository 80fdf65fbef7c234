-- Back to the outbox without held callbacks. A database holding held callbacks is refused
-- (the earlier rule cannot accept them), changing nothing: enable their merchants
-- (`gateway merchant enable ID`) first.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM callback_outbox WHERE state = 'held') THEN
        RAISE EXCEPTION 'callbacks are held: enable their merchants before reverting';
    END IF;
END
$$;

DROP INDEX callback_outbox_held;
ALTER DOMAIN callback_state DROP CONSTRAINT callback_state_check;
ALTER DOMAIN callback_state ADD CONSTRAINT callback_state_check
    CHECK (VALUE IN ('pending', 'delivered', 'failed'));
