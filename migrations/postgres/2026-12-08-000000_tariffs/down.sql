DROP TABLE tariffs;
