import { isoTime } from '../clock';
import type { TokenSealer } from '../secrets/token-sealer';
import { AdmitPolicy, firstCallsOfMinute } from './admission';
import type { PurgeBound, PurgeResult, SyncDataStore } from './data-store';
import { DUE_SHARDS } from './keys';
import type { Connection } from './model';
import type { HourlyService } from './service';
import type { ConnectionStore, HourlyStore } from './store';

/**
 * Connections: the brokerage token, sealed at rest (the store keeps an opaque
 * blob), and the connection's place in the due index. A user without a head
 * is due through its connection item (due at once); once the first
 * reservation wrote a head, the head carries the entry. Every put states
 * which of the two holds, so a put racing a reservation or a removal never
 * leaves a user with no entry or two.
 */

export interface ConnectionServiceDeps {
  store: ConnectionStore;
  /** Seals brokerage tokens at rest (KMS on AWS, the keyring locally); asked for only when a token is written or read. */
  sealer: () => Promise<TokenSealer>;
}

/** Where a connection waiting for its first sync stands (docs/sync.md, "Waiting for the first sync"). */
export interface FirstSyncQueue {
  /** 1 = the next to start: new connections due at or before it, itself included. */
  position: number;
  /** The tick (a whole minute) by which the admission's share should have started it. */
  expected_at: number;
}

/** A queue this long is not walked minute by minute: a week of ticks at most. */
const QUEUE_MINUTES = 7 * 24 * 60;

/** Binds a sealed token to its row: copied onto another user's connection, it does not open. */
export const tokenContext = (user: string) => `sync-connection:${user}`;

export class ConnectionService {
  constructor(private readonly deps: ConnectionServiceDeps) {}

  /** Creates or re-keys (PUT again with another token) a connection. */
  async putConnection(user: string, token: string, now: number): Promise<Connection> {
    const sealed = await (await this.deps.sealer()).seal(token, tokenContext(user));
    // A head appearing or disappearing between the two puts (a reservation, a removal) fails the one we try: try again.
    for (let turn = 0; turn < 8; turn++) {
      if (await this.deps.store.putConnectionIfNoHead(user, sealed, now, now)) break;
      // A new token is tried at the next tick, not an hour after the last attempt (decision 362).
      if (await this.deps.store.putConnectionIfHead(user, sealed, now, now)) break;
      if (turn === 7) throw new Error(`putConnection ${user}: the head kept changing`);
    }
    return { user_id: user, created_at: isoTime(now) };
  }

  /**
   * The stored token, for the tick and the steps only: no read API returns it.
   * Reading never re-seals: a value in an older form stays until the reseal
   * (lib/sync/reseal.ts) migrates it, so the functions that only read need
   * only kms:Decrypt (docs/decisions.md, 242).
   */
  async connectionToken(user: string): Promise<string | undefined> {
    const sealed = await this.deps.store.sealedToken(user);
    if (!sealed) return undefined;
    return (await this.deps.sealer()).open(sealed, tokenContext(user));
  }

  /**
   * Whether the user has a stored token, without opening it: the tick's check (no KMS call, no Decrypt in
   * CloudTrail for every user every hour; the step that uses the token opens it).
   */
  async hasToken(user: string): Promise<boolean> {
    return (await this.deps.store.sealedToken(user)) !== undefined;
  }

  /**
   * A connection that has never had an attempt: its place among the new connections due before it
   * (each shard's due index, counted, never read item by item) and the minute the first syncs'
   * share reaches it (admission.ts). First-sync retries of failed attempts also take the share but
   * are not counted: the expected minute is the earliest, said as such. Undefined once it has an
   * attempt, or with no connection.
   */
  async firstSyncQueue(user: string, now: number, policy: AdmitPolicy): Promise<FirstSyncQueue | undefined> {
    const due = await this.deps.store.connectionDueAt(user);
    if (due === undefined) return undefined;
    const counts = await Promise.all(
      Array.from({ length: DUE_SHARDS }, (_, shard) => this.deps.store.freshDueCount(shard, due)),
    );
    const position = Math.max(
      1,
      counts.reduce((a, b) => a + b, 0),
    );
    // The next tick is the next whole minute (or this one's, still due); each admits its share in due order.
    let minute = Math.floor(Math.max(now, due) / 60_000) + 1;
    for (let admitted = 0, i = 0; i < QUEUE_MINUTES; i++, minute++) {
      admitted += firstCallsOfMinute(policy, minute) / policy.firstCost;
      if (admitted >= position) break;
    }
    return { position, expected_at: minute * 60_000 };
  }

  /** One page of connections by user id (the console): never a token. */
  connectionPage(limit: number, after?: string): Promise<{ items: Connection[]; next?: string }> {
    return this.deps.store.connectionPage(limit, after);
  }

  /** Removes the connection and its hourly head (so its due entry) together; false when there was none. */
  removeConnection(user: string): Promise<boolean> {
    return this.deps.store.removeConnection(user);
  }
}

/**
 * DELETE /sync/connections/{user}: the connection and its head go (one
 * transaction: the user leaves the due index), then the user's synced data,
 * within `bound` (dynamodb-purge.ts). Called again, it goes on where the last
 * call stopped: `purge.done` says when nothing is left. A step already
 * running for the user loses its fence with the head, so its next fenced
 * write is refused (decision 387).
 */
export async function deleteConnection(
  deps: {
    connections: ConnectionService;
    hourly: Pick<HourlyService, 'head'>;
    data: Pick<SyncDataStore, 'purgeUser'>;
  },
  user: string,
  bound: PurgeBound,
): Promise<{ removed: boolean; purge: PurgeResult; running: boolean }> {
  // An attempt in flight: its steps' unfenced writes (accounts, portfolio, events) may still land after the
  // purge, until the step's own bound; the caller is told to call again once that has passed.
  const running = (await deps.hourly.head(user))?.state === 'running';
  const removed = await deps.connections.removeConnection(user);
  return { removed, purge: await deps.data.purgeUser(user, bound), running: removed && running };
}

/**
 * One-off, after deploying the due index over a table written before it:
 * every connection gets its entry (a user without a head through its
 * connection, a head without `due_at` due at once). Pages every connection:
 * never on the tick's path. Idempotent.
 */
export async function backfillDueIndex(
  stores: { connections: ConnectionStore; hourly: HourlyStore },
  now: number,
): Promise<{ connections: number; backfilled: number }> {
  let connections = 0;
  let backfilled = 0;
  for await (const { user_id: user } of stores.connections.connections()) {
    connections++;
    const head = await stores.hourly.head(user);
    if (head?.due_at !== undefined) continue;
    const done = head
      ? await stores.hourly.deferHead(user, head.revision, now)
      : await stores.connections.markConnectionDue(user, now);
    if (done) backfilled++;
  }
  return { connections, backfilled };
}
