/**
 * The fee sponsor's shared state (src/operations/sponsorPolicy.ts holds the rules; this only
 * stores): each wallet's sponsored turn (its owner-signed sponsored messages in flight), strikes,
 * the lamports lost over a sliding hour, and the fees of sponsored transactions in flight (what
 * they could still lose). In process memory for one instance (a restart forgets all of it: the
 * start warns, docs/security.md says what that allows); in Redis when REDIS_URL is set, so that
 * every instance sees the same turns, strikes and losses.
 *
 * Redis keys (prefix `cinder:sponsor:`): `turn:<owner>` the turn as JSON, `account:<token account>`
 * → owner for each token account the turn's messages write (the relay looks a written account up
 * without knowing its owner), `strike:<owner>`, `lost` and `lost:<owner>` (sorted sets of losses,
 * scored by when they happened), `reserved` (a sorted set of the fee bounds in flight, scored by
 * when each reservation lapses). Every key expires on its own; scripts keep each change atomic.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

export interface SponsoredTurn {
  owner: string;
  /** ms since the epoch: the turn ends then at the latest (its blockhash has expired by then). */
  expiresAt: number;
  /** The operation the messages belong to (one prepare answer's relay token, or one keyed operation): its other messages join the turn. */
  group: string;
  /** The identity (src/plan/messageIdentity.ts) of each owner-signed sponsored message in flight. */
  messages: string[];
  /** The signature of each of those messages, in the same order (a 409 names them). */
  signatures: string[];
  /** The token accounts those messages write. */
  accounts: string[];
}

export type BeginTurnResult = { busy: SponsoredTurn } | { added: string[] };

export interface LossWindow {
  /** Lost over the sliding window, all wallets. */
  global: bigint;
  /** Lost over the sliding window by this wallet. */
  owner: bigint;
  /** The fee bounds of sponsored transactions in flight (what they could still lose). */
  reserved: bigint;
  /** ms since the epoch when the oldest loss of the window leaves it (now + the window when there is none). */
  endsAt: number;
  /** The same for this wallet's losses. */
  ownerEndsAt: number;
}

export type ReserveResult = { ok: true } | { ok: false; lost: bigint; reserved: bigint; until: number };

export interface SponsorLedger {
  /** Starts the owner's turn with these messages, adds them to its turn of the same group, or returns the other turn in flight (then nothing changes). */
  beginTurn(turn: SponsoredTurn): Promise<BeginTurnResult>;
  turnOf(owner: string): Promise<SponsoredTurn | null>;
  /** For each account, the owner whose turn in flight writes it, or null. */
  ownersOf(accounts: readonly string[]): Promise<(string | null)[]>;
  /** This message landed (or can no longer land, or was never sent): out of the turn; the turn ends with its last message. */
  finishMessage(owner: string, message: string): Promise<void>;
  /** Ends the turn at once (a failure: the owner is struck anyway). */
  endTurn(owner: string): Promise<void>;
  strike(owner: string, ms: number): Promise<void>;
  /** ms since the epoch until which the owner is struck, or null. */
  struckUntil(owner: string): Promise<number | null>;
  /**
   * Reserves `lamports` (a transaction's fee bound) under `key` until `holdUntil`, only while the
   * losses of the sliding window plus every reservation plus this one stay within `capLamports`.
   * Atomic, so that transactions sent at once cannot together overshoot the cap.
   */
  reserve(key: string, lamports: bigint, options: { capLamports: bigint; windowMs: number; holdUntil: number }): Promise<ReserveResult>;
  /** The transaction under `key` landed, failed (its loss is added) or expired: its reservation ends. */
  release(key: string, lamports: bigint): Promise<void>;
  addLoss(owner: string, lamports: bigint, windowMs: number): Promise<void>;
  losses(owner: string, windowMs: number): Promise<LossWindow>;
}

interface Loss {
  at: number;
  owner: string;
  lamports: bigint;
}

export function createMemorySponsorLedger(): SponsorLedger {
  const turns = new Map<string, SponsoredTurn>();
  const accounts = new Map<string, string>();
  const strikes = new Map<string, number>();
  /** In the order they happened. */
  let lost: Loss[] = [];
  const reserved = new Map<string, { lamports: bigint; until: number }>();

  const liveTurn = (owner: string): SponsoredTurn | null => {
    const turn = turns.get(owner);
    if (!turn) return null;
    if (turn.expiresAt > Date.now()) return turn;
    drop(turn);
    return null;
  };
  function drop(turn: SponsoredTurn) {
    turns.delete(turn.owner);
    for (const account of turn.accounts) if (accounts.get(account) === turn.owner) accounts.delete(account);
  }
  /** Old entries go when a new one comes in: memory stays bounded by what is live. */
  function sweep(windowMs = 0) {
    const now = Date.now();
    for (const turn of turns.values()) if (turn.expiresAt <= now) drop(turn);
    for (const [owner, until] of strikes) if (until <= now) strikes.delete(owner);
    for (const [key, entry] of reserved) if (entry.until <= now) reserved.delete(key);
    if (windowMs > 0) lost = lost.filter((loss) => loss.at > now - windowMs);
  }
  const sum = (values: Iterable<bigint>) => [...values].reduce((a, b) => a + b, 0n);

  return {
    async beginTurn(turn) {
      const current = liveTurn(turn.owner);
      if (current && current.group !== turn.group) return { busy: { ...current } };
      sweep();
      const target = current ?? { ...turn, messages: [], signatures: [], accounts: [] };
      const added: string[] = [];
      turn.messages.forEach((message, i) => {
        if (target.messages.includes(message)) return;
        target.messages.push(message);
        target.signatures.push(turn.signatures[i]!);
        added.push(message);
      });
      for (const account of turn.accounts) {
        if (!target.accounts.includes(account)) target.accounts.push(account);
        accounts.set(account, turn.owner);
      }
      target.expiresAt = Math.max(target.expiresAt, turn.expiresAt);
      turns.set(turn.owner, target);
      return { added };
    },
    async turnOf(owner) {
      const turn = liveTurn(owner);
      return turn && { ...turn, messages: [...turn.messages], signatures: [...turn.signatures], accounts: [...turn.accounts] };
    },
    async ownersOf(list) {
      return list.map((account) => {
        const owner = accounts.get(account);
        return owner !== undefined && liveTurn(owner) ? owner : null;
      });
    },
    async finishMessage(owner, message) {
      const turn = liveTurn(owner);
      if (!turn) return;
      const index = turn.messages.indexOf(message);
      if (index < 0) return;
      turn.messages.splice(index, 1);
      turn.signatures.splice(index, 1);
      if (turn.messages.length === 0) drop(turn);
    },
    async endTurn(owner) {
      const turn = turns.get(owner);
      if (turn) drop(turn);
    },
    async strike(owner, ms) {
      sweep();
      strikes.set(owner, Date.now() + ms);
    },
    async struckUntil(owner) {
      const until = strikes.get(owner);
      return until !== undefined && until > Date.now() ? until : null;
    },
    async reserve(key, lamports, { capLamports, windowMs, holdUntil }) {
      sweep(windowMs);
      if (reserved.has(key)) return { ok: true };
      const lostNow = sum(lost.map((l) => l.lamports));
      const reservedNow = sum([...reserved.values()].map((r) => r.lamports));
      if (lostNow + reservedNow + lamports > capLamports) {
        const now = Date.now();
        const until =
          lostNow + lamports > capLamports
            ? (lost[0]?.at ?? now) + windowMs
            : Math.min(now + windowMs, ...[...reserved.values()].map((r) => r.until));
        return { ok: false, lost: lostNow, reserved: reservedNow, until };
      }
      reserved.set(key, { lamports, until: holdUntil });
      return { ok: true };
    },
    async release(key) {
      reserved.delete(key);
    },
    async addLoss(owner, lamports, windowMs) {
      sweep(windowMs);
      lost.push({ at: Date.now(), owner, lamports });
    },
    async losses(owner, windowMs) {
      sweep(windowMs);
      const now = Date.now();
      const mine = lost.filter((l) => l.owner === owner);
      return {
        global: sum(lost.map((l) => l.lamports)),
        owner: sum(mine.map((l) => l.lamports)),
        reserved: sum([...reserved.values()].filter((r) => r.until > now).map((r) => r.lamports)),
        endsAt: (lost[0]?.at ?? now) + windowMs,
        ownerEndsAt: (mine[0]?.at ?? now) + windowMs,
      };
    },
  };
}

/**
 * Starts the turn, or adds to the turn of the same group; returns {0, current} when another group's
 * turn is in flight, else {1, added messages…}. KEYS: turn, accounts…; ARGV: json, ttl ms, owner.
 */
const BEGIN_SCRIPT = `
local incoming = cjson.decode(ARGV[1])
local current = redis.call('GET', KEYS[1])
local turn = incoming
local added = {}
if current then
  turn = cjson.decode(current)
  if turn.group ~= incoming.group then return {0, current} end
  if type(turn.messages) ~= 'table' or #turn.messages == 0 then turn.messages = {} end
  if type(turn.signatures) ~= 'table' or #turn.signatures == 0 then turn.signatures = {} end
  if type(turn.accounts) ~= 'table' or #turn.accounts == 0 then turn.accounts = {} end
  for i, m in ipairs(incoming.messages) do
    local seen = false
    for _, n in ipairs(turn.messages) do if n == m then seen = true end end
    if not seen then
      table.insert(turn.messages, m)
      table.insert(turn.signatures, incoming.signatures[i])
      table.insert(added, m)
    end
  end
  for _, a in ipairs(incoming.accounts) do
    local seen = false
    for _, b in ipairs(turn.accounts) do if b == a then seen = true end end
    if not seen then table.insert(turn.accounts, a) end
  end
  if incoming.expiresAt > turn.expiresAt then turn.expiresAt = incoming.expiresAt end
else
  for _, m in ipairs(incoming.messages) do table.insert(added, m) end
end
local ttl = tonumber(ARGV[2])
local pttl = redis.call('PTTL', KEYS[1])
if pttl > ttl then ttl = pttl end
redis.call('SET', KEYS[1], cjson.encode(turn), 'PX', ttl)
for i = 2, #KEYS do redis.call('SET', KEYS[i], ARGV[3], 'PX', ttl) end
local reply = {1}
for _, m in ipairs(added) do table.insert(reply, m) end
return reply
`;

/** Removes one message (and its signature) from the turn; with none left, deletes the turn and its account keys. KEYS: turn; ARGV: message, account prefix. */
const FINISH_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local turn = cjson.decode(current)
local left, signatures = {}, {}
for i, m in ipairs(turn.messages) do
  if m ~= ARGV[1] then
    table.insert(left, m)
    table.insert(signatures, turn.signatures[i])
  end
end
if #left > 0 then
  turn.messages = left
  turn.signatures = signatures
  redis.call('SET', KEYS[1], cjson.encode(turn), 'KEEPTTL')
  return 1
end
for _, a in ipairs(turn.accounts) do
  if redis.call('GET', ARGV[2] .. a) == turn.owner then redis.call('DEL', ARGV[2] .. a) end
end
redis.call('DEL', KEYS[1])
return 2
`;

/** Deletes the turn and its account keys. KEYS: turn; ARGV: account prefix. */
const END_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local turn = cjson.decode(current)
for _, a in ipairs(turn.accounts) do
  if redis.call('GET', ARGV[1] .. a) == turn.owner then redis.call('DEL', ARGV[1] .. a) end
end
return redis.call('DEL', KEYS[1])
`;

/** The sum of the lamports at the end of each member (`…|<lamports>`) of a sorted set, and its lowest score. */
const SUM_FUNCTION = `
local function total(key)
  local sum = 0
  for _, m in ipairs(redis.call('ZRANGE', key, 0, -1)) do sum = sum + tonumber(string.match(m, '|(%d+)$')) end
  return sum
end
local function lowest(key)
  local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if first[2] then return tonumber(first[2]) end
  return 0
end
`;

/**
 * Reserves a fee bound when losses (sliding window) + reservations + it stay within the cap.
 * KEYS: lost, reserved; ARGV: now, window ms, cap, member (`key|lamports`), hold until, lamports.
 * Returns {1} or {0, lost, reserved, oldest loss time, earliest reservation end}.
 */
const RESERVE_SCRIPT = `${SUM_FUNCTION}
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZSCORE', KEYS[2], ARGV[4]) then return {1} end
local lost = total(KEYS[1])
local reserved = total(KEYS[2])
if lost + reserved + tonumber(ARGV[6]) > tonumber(ARGV[3]) then
  return {0, string.format('%d', lost), string.format('%d', reserved), string.format('%d', lowest(KEYS[1])), string.format('%d', lowest(KEYS[2]))}
end
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[4])
local hold = tonumber(ARGV[5]) - now
if redis.call('PTTL', KEYS[2]) < hold then redis.call('PEXPIRE', KEYS[2], hold) end
return {1}
`;

/** Losses of the window, all and one wallet's, and reservations in flight. KEYS: lost, lost of owner, reserved; ARGV: now, window ms. */
const LOSSES_SCRIPT = `${SUM_FUNCTION}
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[2]))
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
return {string.format('%d', total(KEYS[1])), string.format('%d', total(KEYS[2])), string.format('%d', total(KEYS[3])), string.format('%d', lowest(KEYS[1])), string.format('%d', lowest(KEYS[2]))}
`;

interface LedgerCommands {
  cinderSponsorBegin(numberOfKeys: number, ...args: (string | number)[]): Promise<[number, ...string[]]>;
  cinderSponsorFinish(turnKey: string, message: string, accountPrefix: string): Promise<number>;
  cinderSponsorEnd(turnKey: string, accountPrefix: string): Promise<number>;
  cinderSponsorReserve(lost: string, reserved: string, now: number, windowMs: number, cap: string, member: string, holdUntil: number, lamports: string): Promise<[number, ...string[]]>;
  cinderSponsorLosses(lost: string, ownerLost: string, reserved: string, now: number, windowMs: number): Promise<string[]>;
}

/** The JSON of a turn as Redis' cjson writes it back: an empty array becomes {} there, so lists are read defensively. */
function parseTurn(text: string): SponsoredTurn {
  const value = JSON.parse(text) as Partial<SponsoredTurn>;
  const list = (v: unknown) => (Array.isArray(v) ? v.map(String) : []);
  return {
    owner: String(value.owner),
    expiresAt: Number(value.expiresAt),
    group: String(value.group ?? ''),
    messages: list(value.messages),
    signatures: list(value.signatures),
    accounts: list(value.accounts),
  };
}

export function createRedisSponsorLedger(redis: Redis, options: { prefix?: string } = {}): SponsorLedger {
  const prefix = options.prefix ?? 'cinder:sponsor:';
  if (!(redis as unknown as Partial<LedgerCommands>).cinderSponsorReserve) {
    redis.defineCommand('cinderSponsorBegin', { lua: BEGIN_SCRIPT });
    redis.defineCommand('cinderSponsorFinish', { numberOfKeys: 1, lua: FINISH_SCRIPT });
    redis.defineCommand('cinderSponsorEnd', { numberOfKeys: 1, lua: END_SCRIPT });
    redis.defineCommand('cinderSponsorReserve', { numberOfKeys: 2, lua: RESERVE_SCRIPT });
    redis.defineCommand('cinderSponsorLosses', { numberOfKeys: 3, lua: LOSSES_SCRIPT });
  }
  const client = redis as unknown as LedgerCommands;
  const turnKey = (owner: string) => `${prefix}turn:${owner}`;
  const accountPrefix = `${prefix}account:`;
  const lostKey = `${prefix}lost`;
  const reservedKey = `${prefix}reserved`;

  async function turnOf(owner: string): Promise<SponsoredTurn | null> {
    const text = await redis.get(turnKey(owner));
    return text === null ? null : parseTurn(text);
  }

  return {
    async beginTurn(turn) {
      const ttl = Math.max(1, turn.expiresAt - Date.now());
      const keys = [turnKey(turn.owner), ...turn.accounts.map((a) => accountPrefix + a)];
      const [state, ...rest] = await client.cinderSponsorBegin(keys.length, ...keys, JSON.stringify(turn), ttl, turn.owner);
      return state === 0 ? { busy: parseTurn(rest[0]!) } : { added: rest };
    },
    turnOf,
    async ownersOf(accounts) {
      if (accounts.length === 0) return [];
      return redis.mget(accounts.map((a) => accountPrefix + a));
    },
    async finishMessage(owner, message) {
      await client.cinderSponsorFinish(turnKey(owner), message, accountPrefix);
    },
    async endTurn(owner) {
      await client.cinderSponsorEnd(turnKey(owner), accountPrefix);
    },
    async strike(owner, ms) {
      await redis.set(`${prefix}strike:${owner}`, String(Date.now() + ms), 'PX', ms);
    },
    async struckUntil(owner) {
      const value = await redis.get(`${prefix}strike:${owner}`);
      return value === null ? null : Number(value);
    },
    async reserve(key, lamports, { capLamports, windowMs, holdUntil }) {
      const [ok, lost, reserved, oldestLoss, earliestEnd] = await client.cinderSponsorReserve(
        lostKey,
        reservedKey,
        Date.now(),
        windowMs,
        capLamports.toString(),
        `${key}|${lamports}`,
        holdUntil,
        lamports.toString(),
      );
      if (ok === 1) return { ok: true };
      const lostNow = BigInt(lost!);
      return {
        ok: false,
        lost: lostNow,
        reserved: BigInt(reserved!),
        until: lostNow + lamports > capLamports ? Number(oldestLoss) + windowMs : Number(earliestEnd),
      };
    },
    async release(key, lamports) {
      await redis.zrem(reservedKey, `${key}|${lamports}`);
    },
    async addLoss(owner, lamports, windowMs) {
      const now = Date.now();
      // The random part keeps two equal losses in the same millisecond two members.
      const member = `${now}|${randomUUID()}|${lamports}`;
      await redis
        .multi()
        .zadd(lostKey, now, member)
        .pexpire(lostKey, windowMs)
        .zadd(`${lostKey}:${owner}`, now, member)
        .pexpire(`${lostKey}:${owner}`, windowMs)
        .exec();
    },
    async losses(owner, windowMs) {
      const now = Date.now();
      const [global, mine, reserved, oldest, ownerOldest] = await client.cinderSponsorLosses(lostKey, `${lostKey}:${owner}`, reservedKey, now, windowMs);
      const [all, wallet] = [BigInt(global!), BigInt(mine!)];
      return {
        global: all,
        owner: wallet,
        reserved: BigInt(reserved!),
        endsAt: (all > 0n ? Number(oldest) : now) + windowMs,
        ownerEndsAt: (wallet > 0n ? Number(ownerOldest) : now) + windowMs,
      };
    },
  };
}
