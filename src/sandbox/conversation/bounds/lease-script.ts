// bounds/: how many conversation interpreters may live, per app, engine and user, and who holds the room.

/**
 * The Lua script every replica runs on the app's Redis to reserve and give back room for
 * interpreters: one script, so each step is atomic. The whole state is one JSON string under
 * one key, `{ v: 1, leases: { [placement]: lease } }`: a string (not a hash or sorted sets), so a
 * store listed through unstorage reads it like any value, and one key, so it fits one slot of a
 * Redis Cluster. A lease is `e` engine, `u` user tag ('' for a waiting interpreter), `c`
 * container id ('' while starting), `at` when it was confirmed, `x` expiry, `l` last use, `b`
 * busy until (ms, Redis's clock: replicas' clocks never meet).
 *
 * ARGV[1] is the request as JSON, `op` one of:
 * - `now`: Redis's time, taken before a listing of the engines;
 * - `reserve`: room for a new interpreter on `engine` for `user` under `maxUser`, `maxAll` (the
 *   engines in `listed`, the caller's listing of the live interpreters on each engine it sees
 *   up, taken after `listedAt`) and `maxEngine`; a starting lease of `ttl` ms;
 * - `claim`: a waiting interpreter's lease given to `user`, under `maxUser`;
 * - `confirm`: the interpreter started as `container`: its lease now lasts `ttl` ms;
 * - `renew`: a starting lease lasts `ttl` ms more (its holder is alive);
 * - `use`: the interpreter runs a cell for up to `busy` ms (0: it is idle);
 * - `release`: the lease goes.
 *
 * Reserve and claim first drop expired leases, and the confirmed leases that a listing taken
 * after their confirmation does not show (their container ended or was removed: idle expiry,
 * out of memory, eviction, the sweep); starting leases are left to their expiry, as their
 * container may not exist yet. Live interpreters that carry no lease (started by a replica of an
 * older version) count too. Refusals say which bound (`full`: `user`, `all`, `engine`) and, for
 * `user` and `engine`, the idle interpreters there (`spare`: placement, engine, container, last
 * use), from which the caller may evict one and ask again.
 */
export const LEASE_SCRIPT = `
if redis.replicate_commands then pcall(redis.replicate_commands) end
local req = cjson.decode(ARGV[1])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if req.op == 'now' then return cjson.encode({ now = now }) end

local leases = {}
local stored = redis.call('GET', KEYS[1])
if stored then
  local ok, value = pcall(cjson.decode, stored)
  if ok and type(value) == 'table' and type(value.leases) == 'table' then leases = value.leases end
end
for id, lease in pairs(leases) do
  if type(lease) ~= 'table' or type(lease.x) ~= 'number' or lease.x <= now then
    leases[id] = nil
  else
    lease.e, lease.u, lease.c = tostring(lease.e or ''), tostring(lease.u or ''), tostring(lease.c or '')
    lease.at, lease.l, lease.b = tonumber(lease.at) or 0, tonumber(lease.l) or 0, tonumber(lease.b) or 0
  end
end

local function answer(result)
  local last = 0
  for _, lease in pairs(leases) do
    if lease.x > last then last = lease.x end
  end
  if last > now then
    redis.call('SET', KEYS[1], cjson.encode({ v = 1, leases = leases }), 'PX', last - now)
  else
    redis.call('DEL', KEYS[1])
  end
  result.now = now
  return cjson.encode(result)
end

local op, id = req.op, req.id
local function busyUntil(ms)
  if ms > 0 then return now + ms end
  return 0
end
if op == 'release' then
  leases[id] = nil
  return answer({ ok = true })
end
if op == 'renew' or op == 'use' then
  local lease = leases[id]
  if lease and op == 'renew' and lease.c == '' then lease.x = now + req.ttl end
  if lease and op == 'use' then lease.l, lease.b = now, busyUntil(req.busy) end
  return answer({ ok = lease ~= nil })
end
if op == 'confirm' then
  -- Past its expiry (a start slower than its renewals) it comes back: the container exists.
  local lease = leases[id] or { e = req.engine, u = req.user }
  lease.c, lease.at, lease.l, lease.x, lease.b = req.container, now, now, now + req.ttl, busyUntil(req.busy)
  leases[id] = lease
  return answer({ ok = true })
end

local listed = {}
for engine, ids in pairs(req.listed) do
  for _, placement in ipairs(ids) do listed[placement] = engine end
end
for lid, lease in pairs(leases) do
  if lease.c ~= '' and lease.at < req.listedAt and req.listed[lease.e] ~= nil and listed[lid] == nil then
    leases[lid] = nil
  end
end
local all, here, mine, spareHere, spareMine = 0, 0, 0, {}, {}
for lid, lease in pairs(leases) do
  local engine = listed[lid] or lease.e
  local idle = lease.c ~= '' and lease.b <= now
  if req.listed[engine] ~= nil then
    all = all + 1
    if engine == req.engine then
      here = here + 1
      if idle then spareHere[#spareHere + 1] = { id = lid, e = engine, c = lease.c, l = lease.l } end
    end
    if req.user ~= '' and lease.u == req.user and lid ~= id then
      mine = mine + 1
      if idle then spareMine[#spareMine + 1] = { id = lid, e = engine, c = lease.c, l = lease.l } end
    end
  end
end
for placement, engine in pairs(listed) do
  if leases[placement] == nil then
    all = all + 1
    if engine == req.engine then
      here = here + 1
      spareHere[#spareHere + 1] = { id = placement, e = engine, c = '', l = 0 }
    end
  end
end

if req.user ~= '' and mine >= req.maxUser then return answer({ full = 'user', spare = spareMine }) end
if op == 'claim' then
  local lease = leases[id] or { e = req.engine, c = req.container, at = now, x = now + req.ttl }
  lease.u, lease.l, lease.b = req.user, now, busyUntil(req.busy)
  leases[id] = lease
  return answer({ ok = true })
end
if all >= req.maxAll then return answer({ full = 'all' }) end
if here >= req.maxEngine then return answer({ full = 'engine', spare = spareHere }) end
leases[id] = { e = req.engine, u = req.user, c = '', at = 0, l = now, b = 0, x = now + req.ttl }
return answer({ ok = true })
`;
