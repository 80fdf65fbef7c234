-- Process reports: every serving process writes who it is and its circuit breakers every
-- 5 s, so that `gateway provider list` shows each live process's view of the providers.
-- Times are BIGINT milliseconds since the epoch.

-- One row per serving process run; rows not seen for an hour are deleted by the next report.
CREATE TABLE gateway_processes (
    id         TEXT PRIMARY KEY NOT NULL CHECK (length(id) >= 1),
    version    TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    seen_at    BIGINT NOT NULL
);

-- The circuit of each provider a process has called, as of its last report.
CREATE TABLE process_circuits (
    process_id TEXT NOT NULL REFERENCES gateway_processes (id),
    provider   TEXT NOT NULL CHECK (length(provider) >= 1),
    state      TEXT NOT NULL CHECK (state IN ('closed', 'open', 'half_open')),
    -- Failures in a row of a closed circuit; 0 otherwise.
    failures   INTEGER NOT NULL CHECK (failures >= 0),
    -- Until when an open circuit skips its provider; NULL unless open.
    open_until BIGINT,
    PRIMARY KEY (process_id, provider),
    CHECK ((state = 'open') = (open_until IS NOT NULL))
);
