-- One token bucket, a hash at KEYS[1]: max (tokens per window), interval
-- (µs), start (µs, the first window's start), tick (the window last
-- refilled, counted from start) and avail (tokens left in it).
--
-- ARGV: op ("take", "get", "set" or "burst"), the tokens and interval (µs)
-- of a new bucket, the TTL (ms) of an idle bucket, and the tokens a burst
-- adds. Returns {max, avail, reset (µs), 1 if a token was taken else 0}.
--
-- Time is the Redis server's, so every client shares one clock. It is kept
-- in microseconds: nanoseconds since 1970 do not fit a double exactly.
local key, op = KEYS[1], ARGV[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

local max, interval, start, tick, avail
local b = redis.call('HMGET', key, 'max', 'interval', 'start', 'tick', 'avail')
if op ~= 'set' and b[1] and b[2] and b[3] and b[4] and b[5] then
  max, interval, start, tick, avail = tonumber(b[1]), tonumber(b[2]), tonumber(b[3]), tonumber(b[4]), tonumber(b[5])
elseif op == 'get' then
  return {0, 0, 0, 0}
else
  max, interval, start, tick = tonumber(ARGV[2]), tonumber(ARGV[3]), now, 0
  avail = max
end

-- A new window starts full. A server clock that stepped back stays in the
-- window last seen.
local curr = math.floor((now - start) / interval)
if curr > tick then
  tick, avail = curr, max
end
local reset = start + (tick + 1) * interval

local ok = 0
if op == 'take' and avail > 0 then
  avail, ok = avail - 1, 1
elseif op == 'burst' then
  avail = avail + tonumber(ARGV[5])
end

if op ~= 'get' then
  redis.call('HSET', key, 'max', max, 'interval', interval, 'start', start, 'tick', tick, 'avail', avail)
  redis.call('PEXPIRE', key, math.max(tonumber(ARGV[4]), math.ceil((reset - now) / 1000)))
end
return {max, avail, reset, ok}
