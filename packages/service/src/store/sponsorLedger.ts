/**
 * The fee sponsor's shared state (src/operations/sponsorPolicy.ts holds the rules; this only
 * stores): each wallet's outstanding sponsored operation (its turn), strikes, and the lamports lost
 * per hour. In process memory for one instance; in Redis when REDIS_URL is set, so that every
 * instance sees the same turns, strikes and losses (a second sponsored prepare on another instance
 * is refused as on this one).
 *
 * Redis keys (prefix `cinder:sponsor:`): `turn:<owner>` the turn as JSON, `account:<token account>`
 * → owner for each token account the turn's messages write (the relay looks a written account up
 * without knowing its owner), `strike:<owner>`, `lost:<hour>` and `lost:<hour>:<owner>` (INCRBY in
 * lamports; Redis integers are 64-bit, enough for any fee sum). Every key expires on its own.
 */
import type { Redis } from 'ioredis';

export interface SponsoredTurn {
  owner: string;
  /** ms since the epoch: the turn ends then at the latest (its blockhash has expired by then). */
  expiresAt: number;
  /** SHA-256 (hex) of each sponsored message not yet landed. */
  messages: string[];
  /** The token accounts those messages write. */
  accounts: string[];
}

export interface LossWindow {
  global: bigint;
  owner: bigint;
  /** ms since the epoch when this window ends. */
  endsAt: number;
}

export interface SponsorLedger {
  /** Starts the owner's turn, or returns the turn that is already outstanding (then nothing changes). */
  beginTurn(turn: SponsoredTurn): Promise<SponsoredTurn | null>;
  turnOf(owner: string): Promise<SponsoredTurn | null>;
  /** For each account, the owner whose outstanding turn writes it, or null. */
  ownersOf(accounts: readonly string[]): Promise<(string | null)[]>;
  /** This message landed (or can no longer land): out of the turn; the turn ends with its last message. */
  finishMessage(owner: string, message: string): Promise<void>;
  /** Ends the turn at once (a failure: the owner is struck anyway). */
  endTurn(owner: string): Promise<void>;
  strike(owner: string, ms: number): Promise<void>;
  /** ms since the epoch until which the owner is struck, or null. */
  struckUntil(owner: string): Promise<number | null>;
  addLoss(owner: string, lamports: bigint, windowMs: number): Promise<void>;
  losses(owner: string, windowMs: number): Promise<LossWindow>;
}

const windowOf = (windowMs: number, now = Date.now()) => {
  const index = Math.floor(now / windowMs);
  return { index, endsAt: (index + 1) * windowMs };
};

export function createMemorySponsorLedger(): SponsorLedger {
  const turns = new Map<string, SponsoredTurn>();
  const accounts = new Map<string, string>();
  const strikes = new Map<string, number>();
  const lost = new Map<string, { lamports: bigint; endsAt: number }>();

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
  function sweep() {
    const now = Date.now();
    for (const turn of turns.values()) if (turn.expiresAt <= now) drop(turn);
    for (const [owner, until] of strikes) if (until <= now) strikes.delete(owner);
    for (const [key, entry] of lost) if (entry.endsAt <= now) lost.delete(key);
  }
  const lostIn = (key: string) => {
    const entry = lost.get(key);
    return entry && entry.endsAt > Date.now() ? entry.lamports : 0n;
  };

  return {
    async beginTurn(turn) {
      const current = liveTurn(turn.owner);
      if (current) return current;
      sweep();
      turns.set(turn.owner, { ...turn, messages: [...turn.messages], accounts: [...turn.accounts] });
      for (const account of turn.accounts) accounts.set(account, turn.owner);
      return null;
    },
    async turnOf(owner) {
      return liveTurn(owner);
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
      turn.messages = turn.messages.filter((m) => m !== message);
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
    async addLoss(owner, lamports, windowMs) {
      sweep();
      const { index, endsAt } = windowOf(windowMs);
      for (const key of [`${index}`, `${index}:${owner}`]) lost.set(key, { lamports: lostIn(key) + lamports, endsAt });
    },
    async losses(owner, windowMs) {
      const { index, endsAt } = windowOf(windowMs);
      return { global: lostIn(`${index}`), owner: lostIn(`${index}:${owner}`), endsAt };
    },
  };
}

/** SET the turn and its account keys unless a turn is there; returns the existing turn (or nil). KEYS: turn, accounts…; ARGV: json, ttl ms, owner. */
const BEGIN_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if current then return current end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
for i = 2, #KEYS do redis.call('SET', KEYS[i], ARGV[3], 'PX', ARGV[2]) end
return false
`;

/** Removes one message from the turn; with none left, deletes the turn and its account keys. KEYS: turn; ARGV: message, account prefix. */
const FINISH_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local turn = cjson.decode(current)
local left = {}
for _, m in ipairs(turn.messages) do if m ~= ARGV[1] then table.insert(left, m) end end
if #left > 0 then
  turn.messages = left
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

interface LedgerCommands {
  cinderSponsorBegin(numberOfKeys: number, ...args: (string | number)[]): Promise<string | null>;
  cinderSponsorFinish(turnKey: string, message: string, accountPrefix: string): Promise<number>;
  cinderSponsorEnd(turnKey: string, accountPrefix: string): Promise<number>;
}

/** The JSON of a turn as Redis' cjson writes it back: an empty array becomes {} there, so lists are read defensively. */
function parseTurn(text: string): SponsoredTurn {
  const value = JSON.parse(text) as Partial<SponsoredTurn>;
  const list = (v: unknown) => (Array.isArray(v) ? v.map(String) : []);
  return { owner: String(value.owner), expiresAt: Number(value.expiresAt), messages: list(value.messages), accounts: list(value.accounts) };
}

export function createRedisSponsorLedger(redis: Redis, options: { prefix?: string } = {}): SponsorLedger {
  const prefix = options.prefix ?? 'cinder:sponsor:';
  if (!(redis as unknown as Partial<LedgerCommands>).cinderSponsorBegin) {
    redis.defineCommand('cinderSponsorBegin', { lua: BEGIN_SCRIPT });
    redis.defineCommand('cinderSponsorFinish', { numberOfKeys: 1, lua: FINISH_SCRIPT });
    redis.defineCommand('cinderSponsorEnd', { numberOfKeys: 1, lua: END_SCRIPT });
  }
  const client = redis as unknown as LedgerCommands;
  const turnKey = (owner: string) => `${prefix}turn:${owner}`;
  const accountPrefix = `${prefix}account:`;

  async function turnOf(owner: string): Promise<SponsoredTurn | null> {
    const text = await redis.get(turnKey(owner));
    return text === null ? null : parseTurn(text);
  }

  return {
    async beginTurn(turn) {
      const ttl = Math.max(1, turn.expiresAt - Date.now());
      const keys = [turnKey(turn.owner), ...turn.accounts.map((a) => accountPrefix + a)];
      const current = await client.cinderSponsorBegin(keys.length, ...keys, JSON.stringify(turn), ttl, turn.owner);
      return current === null ? null : parseTurn(current);
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
    async addLoss(owner, lamports, windowMs) {
      const { index } = windowOf(windowMs);
      // Kept for two windows, so a window's total is still readable while it ends.
      await redis
        .multi()
        .incrby(`${prefix}lost:${index}`, lamports.toString())
        .pexpire(`${prefix}lost:${index}`, 2 * windowMs)
        .incrby(`${prefix}lost:${index}:${owner}`, lamports.toString())
        .pexpire(`${prefix}lost:${index}:${owner}`, 2 * windowMs)
        .exec();
    },
    async losses(owner, windowMs) {
      const { index, endsAt } = windowOf(windowMs);
      const [global, mine] = await redis.mget(`${prefix}lost:${index}`, `${prefix}lost:${index}:${owner}`);
      return { global: BigInt(global ?? 0), owner: BigInt(mine ?? 0), endsAt };
    },
  };
}
