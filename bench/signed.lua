-- wrk script: replays pre-signed requests, each one once.
--
--   wrk -t2 -c64 -d15s -s bench/signed.lua http://127.0.0.1:18080 -- FILE PATH THREADS
--
-- FILE holds "MERCHANT_ID<TAB>SIGNATURE<TAB>BODY" lines (bench/gen_requests.py). Thread k of
-- THREADS takes lines k, k+THREADS, ... and formats them all before the clock starts, so
-- request() is a table lookup. A thread that runs out of lines stops and says so in the
-- summary: requests are never sent twice.

local threads = {}
local next_id = 0

function setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end

function init(args)
  local file, path, nthreads = args[1], args[2], tonumber(args[3])
  requests = {}
  local i = 0
  for line in io.lines(file) do
    if i % nthreads == id then
      local merchant, signature, body = line:match("^([^\t]+)\t([^\t]+)\t(.+)$")
      requests[#requests + 1] = wrk.format("POST", path, {
        ["merchant-id"] = merchant,
        ["x-signature"] = signature,
        ["Content-Type"] = "application/json",
      }, body)
    end
    i = i + 1
  end
  sent = 0
  exhausted = false
end

function request()
  if sent >= #requests then
    -- Out of distinct requests: stop rather than replay one.
    exhausted = true
    wrk.thread:stop()
    return requests[#requests]
  end
  sent = sent + 1
  return requests[sent]
end

function done(summary, latency, _)
  local e = summary.errors
  local sent_total, exhausted_any = 0, false
  for _, thread in ipairs(threads) do
    sent_total = sent_total + (thread:get("sent") or 0)
    exhausted_any = exhausted_any or thread:get("exhausted")
  end
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"rps":%.1f,"p50_us":%d,"p90_us":%d,'
      .. '"p99_us":%d,"p999_us":%d,"max_us":%d,"mean_us":%.1f,"err_connect":%d,"err_read":%d,'
      .. '"err_write":%d,"err_status":%d,"err_timeout":%d,"sent":%d,"exhausted":%s}\n',
    summary.requests, summary.duration, summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency:percentile(99.9), latency.max,
    latency.mean, e.connect, e.read, e.write, e.status, e.timeout, sent_total,
    tostring(exhausted_any)))
end
