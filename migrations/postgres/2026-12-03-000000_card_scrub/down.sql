-- Back to the schema before the card scrub: the data steps go. The rows it cleaned stay
-- as they are: a masked card number cannot be unmasked, nor a dropped code brought back.
DROP TABLE data_steps;
