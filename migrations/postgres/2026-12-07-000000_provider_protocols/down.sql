-- Back to the Acquirer API alone; fails while a provider speaks another protocol.
ALTER TABLE providers DROP CONSTRAINT providers_kind_check;
ALTER TABLE providers ADD CONSTRAINT providers_kind_check CHECK (kind = 'acquirer');
