local depth = 16
local summary_path = [==[/tmp/pytest-of-root/pytest-71/runs0/ci-quick/kestrel-transports-2018/kestrel@ioq1__plaintext__wrk__c64__r2/warmup/summary.json]==]

if depth > 1 then
  init = function(args)
    local r = {}
    for i = 1, depth do
      r[i] = wrk.format()
    end
    req = table.concat(r)
  end

  request = function()
    return req
  end
end

local function num(x)
  if x ~= x or x == math.huge or x == -math.huge then
    return "null"
  end
  return string.format("%.3f", x)
end

done = function(summary, latency, requests)
  local e = summary.errors
  local f = assert(io.open(summary_path, "w"))
  f:write("{\n")
  f:write(string.format('"requests": %d,\n', summary.requests))
  f:write(string.format('"duration_us": %d,\n', summary.duration))
  f:write(string.format('"bytes": %d,\n', summary.bytes))
  f:write(string.format(
    '"errors": {"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d},\n',
    e.connect, e.read, e.write, e.status, e.timeout))
  f:write(string.format('"pipeline": %d,\n', depth))
  f:write('"latency_us": {')
  f:write('"mean": ' .. num(latency.mean) .. ', "max": ' .. num(latency.max))
  for _, p in ipairs({50, 90, 99}) do
    f:write(string.format(', "p%d": %s', p, num(latency:percentile(p))))
  end
  f:write("}\n}\n")
  f:close()
end
