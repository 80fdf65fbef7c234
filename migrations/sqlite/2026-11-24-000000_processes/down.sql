DROP TABLE process_circuits;
DROP TABLE gateway_processes;
