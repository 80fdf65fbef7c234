DROP TABLE callback_attempts;
DROP TABLE callback_outbox;
DROP TABLE ledger;
DROP TABLE balances;
DROP TABLE operations;
DROP TABLE routes;
DROP TABLE merchant_methods;
DROP TABLE merchants;
