import { createHash } from 'node:crypto';
import { isoTime, parseIsoTime } from '../clock';
import { FieldSpec, pickFields, readItem } from '../util/item';
import { UnsafeKeyPartError } from './errors';
import type { HourlyHead, StepRow } from './model';
import type { Account, BondEvent, Dividend, Instrument, Operation, Portfolio } from './tbank/contract';

/**
 * Key design of the sync table: the ONLY place that writes a key prefix.
 * Items built from brokerage data take named fields only (toItem below), and
 * their keys are written LAST: an upstream object never chooses a key.
 *
 * item            PK                                       SK                           access pattern
 * connection      CONN                                     USER#<user>                  every connection (a one-off backfill of the due index)
 * hourly head     USER#<user>                              HOURLY                       the fence: reserve / CAS every write of the attempt
 * attempt         ATTEMPT#<attempt>                        META                         GET /sync/attempts/{id}
 * step row        ATTEMPT#<attempt>                        STEP#<section>               rows of an attempt: Query PK, begins_with STEP#
 * account         USER#<user>                              ACCOUNT#<account>            the accounts GetAccounts returned last
 * op window       USER#<user>                              OPWIN#<account>#<YYYY-MM>    the pointer to a window's current generation
 * operation       OPGEN#<user>#<account>#<YYYY-MM>#<gen>   <date>#<seq>                 one generation of one window, by date
 * portfolio       USER#<user>                              PORTFOLIO#<account>          replaced whole per sync
 * events          USER#<user>                              EVT#<instrument uid>         dividends + bond events of a held instrument
 * seen            USER#<user>                              SEEN                         instrument uids seen (a string set)
 * instrument      INSTR#<uid>                              META                         the shared catalog
 * rate window     RATE#<user>                              <service>#<window start>     the token's calls per window: the console's view (TTL)
 * pace            PACE#<schedule>                          PACE                         a pacing schedule (pacer.ts): EGRESS, TOKEN#<user>#<service> (TTL)
 *
 * Index ATTEMPTS (sparse; attempt_user / attempt_started, all attributes): a
 * user's attempt records newest first, for the operator console. Attributes of
 * their own, set on attempt records only: an index on `started_at` would type
 * an attribute that old items hold as epoch-ms numbers.
 * Index DUE (sparse; due_shard / due_at, projection user_id): the tick's work list.
 * A head always carries due_shard = DUE#<0..15> (from a hash of the user id) and
 * due_at (ISO), so every write of the head moves its entry in the same write. A
 * connection carries them only while its user has no head (a new connection is
 * due at once); the first reservation removes them in its transaction.
 */
export const connectionKey = (user: string) => ({ PK: 'CONN', SK: `USER#${user}` });
/** A due index entry (or any item) that is a connection's: its user was never attempted. */
export const isConnectionItem = (item: Record<string, unknown>) => item.PK === connectionsPartition;
export const headKey = (user: string) => ({ PK: `USER#${user}`, SK: 'HOURLY' });
export const attemptKey = (attempt: string) => ({ PK: `ATTEMPT#${attempt}`, SK: 'META' });
/** Step rows sort under this prefix in their attempt's partition (beside its record, `META`). */
export const STEP_SORT_PREFIX = 'STEP#';
export const stepKey = (attempt: string, section: string) => ({
  PK: `ATTEMPT#${attempt}`,
  SK: `${STEP_SORT_PREFIX}${section}`,
});
export const userPartition = (user: string) => `USER#${user}`;
export const attemptPartition = (attempt: string) => `ATTEMPT#${attempt}`;
export const connectionsPartition = 'CONN';

export const DUE_INDEX = 'DUE';
/** Fixed: a user's shard is a hash of its id, so changing this re-shards every item. */
export const DUE_SHARDS = 16;
export const dueShardKey = (shard: number) => `DUE#${shard}`;
export function dueShardOf(user: string): number {
  return createHash('sha256').update(user).digest().readUInt32BE(0) % DUE_SHARDS;
}
export const dueEntry = (user: string, dueAt: number) => ({
  due_shard: dueShardKey(dueShardOf(user)),
  due_at: isoTime(dueAt),
});

/** Upstream ids that end up inside a key: a closed alphabet, so none can carry a '#' or reach another prefix. */
const UPSTREAM_ID = /^[A-Za-z0-9_.-]{1,64}$/;
export function keyPart(what: string, value: string): string {
  if (!UPSTREAM_ID.test(value)) throw new UnsafeKeyPartError(what, value);
  return value;
}
const MONTH = /^\d{4}-\d{2}$/;
const month = (m: string) => {
  if (!MONTH.test(m)) throw new UnsafeKeyPartError('month', m);
  return m;
};

export const accountKey = (user: string, account: string) => ({
  PK: userPartition(user),
  SK: `ACCOUNT#${keyPart('account', account)}`,
});
export const accountsPrefix = 'ACCOUNT#';
export const opWindowKey = (user: string, account: string, m: string) => ({
  PK: userPartition(user),
  SK: `OPWIN#${keyPart('account', account)}#${month(m)}`,
});
export const opWindowPrefix = (account?: string) => (account ? `OPWIN#${keyPart('account', account)}#` : 'OPWIN#');
export const opGenerationPartition = (user: string, account: string, m: string, gen: string) =>
  `OPGEN#${user}#${keyPart('account', account)}#${month(m)}#${keyPart('generation', gen)}`;
export const portfolioKey = (user: string, account: string) => ({
  PK: userPartition(user),
  SK: `PORTFOLIO#${keyPart('account', account)}`,
});
export const portfolioPrefix = 'PORTFOLIO#';
export const eventsKey = (user: string, instrument: string) => ({
  PK: userPartition(user),
  SK: `EVT#${keyPart('instrument', instrument)}`,
});
export const seenKey = (user: string) => ({ PK: userPartition(user), SK: 'SEEN' });
export const instrumentKey = (uid: string) => ({ PK: `INSTR#${keyPart('instrument', uid)}`, SK: 'META' });
export const ratePartition = (user: string) => `RATE#${user}`;
/** A pacing schedule's item; its name is ours (pacer.ts), a user id inside it a ULID. */
export const paceKey = (schedule: string) => ({ PK: `PACE#${schedule}`, SK: 'PACE' });
export const rateKey = (user: string, service: string, windowStart: number) => ({
  PK: ratePartition(user),
  SK: `${service}#${windowStart}`,
});
/** The service and window of a rate item's sort key; undefined for anything else. */
export function rateWindowOf(sk: string): { service: string; window_start: number } | undefined {
  const m = /^([A-Za-z]{1,64})#(\d{1,15})$/.exec(sk);
  return m ? { service: m[1], window_start: Number(m[2]) } : undefined;
}
/** Index ATTEMPTS (attempt_user / attempt_started, projection ALL): attempt records only. */
export const ATTEMPTS_INDEX = 'ATTEMPTS';

// --- items of brokerage data: named fields, keys last ---------------------------

type Item = Record<string, unknown>;

/** Copies the named fields only; an absent field stays absent (DynamoDB refuses undefined). */
function named<T extends object>(source: T, fields: readonly (keyof T)[]): Item {
  const out: Item = Object.create(null) as Item;
  for (const field of fields) {
    const value = source[field];
    if (value !== undefined) out[field as string] = value;
  }
  return { ...out };
}

const ACCOUNT_FIELDS = ['id', 'type', 'name', 'status', 'access_level', 'opened_date', 'closed_date'] as const;
/** The fields of a stored operation: what its item is written from and read back through. */
const OPERATION: FieldSpec<Operation> = {
  id: 'string',
  parent_operation_id: 'string?',
  account_id: 'string',
  date: 'string',
  type: 'string',
  state: 'string',
  name: 'string?',
  description: 'string?',
  instrument_uid: 'string?',
  figi: 'string?',
  instrument_type: 'string?',
  instrument_kind: 'string?',
  payment: 'object?',
  price: 'object?',
  commission: 'object?',
  accrued_int: 'object?',
  quantity: 'string?',
  quantity_rest: 'string?',
  quantity_done: 'string?',
};
const POSITION_FIELDS = [
  'figi',
  'instrument_uid',
  'instrument_type',
  'ticker',
  'class_code',
  'quantity',
  'average_position_price',
  'current_price',
] as const;
const DIVIDEND_FIELDS = [
  'dividend_net',
  'payment_date',
  'declared_date',
  'last_buy_date',
  'record_date',
  'dividend_type',
  'regularity',
  'yield_value',
] as const;
const BOND_EVENT_FIELDS = [
  'instrument_id',
  'event_number',
  'event_date',
  'event_type',
  'pay_date',
  'pay_one_bond',
  'coupon_interest_rate',
] as const;
const INSTRUMENT_FIELDS = [
  'figi',
  'uid',
  'ticker',
  'class_code',
  'isin',
  'name',
  'currency',
  'lot',
  'instrument_type',
  'instrument_kind',
] as const;

export const accountItem = (user: string, a: Account, syncedAt: number): Item => ({
  ...named(a, ACCOUNT_FIELDS),
  entity: 'account',
  user_id: user,
  synced_at: syncedAt,
  ...accountKey(user, a.id),
});

export const operationItem = (user: string, m: string, gen: string, seq: number, op: Operation): Item => ({
  ...pickFields(OPERATION, op),
  entity: 'operation',
  user_id: user,
  PK: opGenerationPartition(user, op.account_id, m, gen),
  SK: `${op.date}#${String(seq).padStart(6, '0')}`,
});
export const operationFromItem = (item: Item): Operation => readItem(OPERATION, item, 'operation');

export const portfolioItem = (user: string, p: Portfolio, syncedAt: number): Item => ({
  account_id: p.account_id,
  ...(p.total_amount_portfolio ? { total_amount_portfolio: p.total_amount_portfolio } : {}),
  ...(p.expected_yield ? { expected_yield: p.expected_yield } : {}),
  positions: p.positions.map((pos) => named(pos, POSITION_FIELDS)),
  entity: 'portfolio',
  user_id: user,
  synced_at: syncedAt,
  ...portfolioKey(user, p.account_id),
});

export const eventsItem = (
  user: string,
  instrument: string,
  dividends: Dividend[],
  bondEvents: BondEvent[],
  syncedAt: number,
): Item => ({
  instrument_uid: instrument,
  dividends: dividends.map((d) => named(d, DIVIDEND_FIELDS)),
  bond_events: bondEvents.map((e) => named(e, BOND_EVENT_FIELDS)),
  entity: 'events',
  user_id: user,
  synced_at: syncedAt,
  ...eventsKey(user, instrument),
});

export const instrumentItem = (i: Instrument, fetchedAt: number): Item => ({
  ...named(i, INSTRUMENT_FIELDS),
  entity: 'instrument',
  fetched_at: fetchedAt,
  ...instrumentKey(i.uid),
});

// --- items of the hourly coordinator: times ISO-8601 at rest, epoch ms in memory ---------------

/**
 * A time as stored: ISO (this code) or epoch ms (items written before times
 * became ISO, still in deployed tables). Anything else is absent.
 */
function storedTime(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  return parseIsoTime(value);
}
const isoOrAbsent = (ms: number | undefined) => (ms === undefined ? undefined : isoTime(ms));

/** The head's and attempt record's fields besides its times (stored ISO, read from either form below). */
const HEAD: FieldSpec<Omit<HourlyHead, 'started_at' | 'run_deadline' | 'finished_at' | 'due_at' | 'rekeyed_at'>> = {
  user_id: 'string',
  attempt_id: 'string',
  state: 'string',
  run_id: 'string',
  walk_completed: 'boolean',
  children: 'object?',
  error_code: 'string?',
  sections: 'object?',
  revision: 'number',
};

function headFields(head: HourlyHead): Item {
  return {
    ...pickFields(HEAD, head),
    ...named(
      {
        started_at: isoTime(head.started_at),
        run_deadline: isoTime(head.run_deadline),
        finished_at: isoOrAbsent(head.finished_at),
        rekeyed_at: isoOrAbsent(head.rekeyed_at),
      },
      ['started_at', 'run_deadline', 'finished_at', 'rekeyed_at'],
    ),
  };
}

/** The head: its due entry (due_shard, due_at) travels with every write of it. */
export const headItem = (head: HourlyHead): Item => ({
  ...headFields(head),
  entity: 'hourly',
  ...(head.due_at === undefined ? {} : dueEntry(head.user_id, head.due_at)),
  ...headKey(head.user_id),
});

/** The attempt record (a copy of the head, rewritten at settle): never in the due index; in ATTEMPTS. */
export const attemptItem = (head: HourlyHead): Item => ({
  ...headFields(head),
  entity: 'attempt',
  attempt_user: head.user_id,
  attempt_started: isoTime(head.started_at),
  ...attemptKey(head.attempt_id),
});

export function headFromItem(item: Item): HourlyHead {
  const head: HourlyHead = {
    ...readItem(HEAD, item, 'hourly'),
    started_at: storedTime(item.started_at) ?? 0,
    run_deadline: storedTime(item.run_deadline) ?? 0,
  };
  const finished = storedTime(item.finished_at);
  if (finished !== undefined) head.finished_at = finished;
  const due = storedTime(item.due_at);
  if (due !== undefined) head.due_at = due;
  const rekeyed = storedTime(item.rekeyed_at);
  if (rekeyed !== undefined) head.rekeyed_at = rekeyed;
  head.children ??= {};
  return head;
}

/** A step row's fields besides its times. */
const STEP: FieldSpec<Omit<StepRow, 'started_at' | 'finished_at'>> = {
  attempt_id: 'string',
  step_id: 'string',
  section: 'string',
  state: 'string',
  error_code: 'string?',
  tracking_id: 'string?',
  unknown_values: 'number?',
  unknown_names: 'array?',
  skipped_accounts: 'array?',
  continuations: 'number?',
  resume: 'object?',
  awaiting_start: 'boolean?',
};

export const stepItem = (row: StepRow): Item => ({
  ...pickFields(STEP, row),
  ...named({ started_at: isoTime(row.started_at), finished_at: isoOrAbsent(row.finished_at) }, [
    'started_at',
    'finished_at',
  ]),
  entity: 'step',
  ...stepKey(row.attempt_id, row.section),
});

export function stepFromItem(item: Item): StepRow {
  const row: StepRow = { ...readItem(STEP, item, 'step'), started_at: storedTime(item.started_at) ?? 0 };
  const finished = storedTime(item.finished_at);
  if (finished !== undefined) row.finished_at = finished;
  return row;
}

/** A connection: its sealed token; the due entry only while its user has no head (`dueAt`). */
export const connectionItem = (user: string, sealed: string, createdAt: number, dueAt?: number): Item => ({
  user_id: user,
  created_at: isoTime(createdAt),
  token_sealed: sealed,
  entity: 'connection',
  ...(dueAt === undefined ? {} : dueEntry(user, dueAt)),
  ...connectionKey(user),
});
