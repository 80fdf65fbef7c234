DROP TABLE page_reads;
