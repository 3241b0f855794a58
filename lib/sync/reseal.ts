import type { Logger } from '../log';
import { SecretUnreadableError } from '../secrets/errors';
import type { TokenSealer } from '../secrets/token-sealer';
import { tokenContext } from './connections';
import { ResealInputError } from './errors';
import type { ConnectionStore } from './store';

/**
 * The migration of stored tokens to the current sealer: KMS from the legacy
 * keyring, or a keyring's newest key after a rotation. Pages through the
 * connections by user id and re-seals each value not in the current form,
 * writing it only if the stored value is still the one read: a token replaced
 * meanwhile wins and is counted, never overwritten. The cursor is the last
 * user id done; a value already current is left alone, so a run resumed from
 * any earlier cursor, or run twice, does no harm.
 */

export interface ResealCounts {
  scanned: number;
  resealed: number;
  /** Already in the current form: nothing to do. */
  current: number;
  /** Replaced or removed between the read and the write: the newer value stays. */
  changed: number;
  /** Would not open (tampered, or its key is gone): left as it is, logged by user id. */
  unreadable: number;
}

export interface ResealDeps {
  store: Pick<ConnectionStore, 'sealedTokenPage' | 'replaceSealedToken'>;
  sealer: TokenSealer;
  log: Logger;
}

export interface ResealOptions {
  /** Resume after this user id (a cursor an earlier run returned). */
  cursor?: string;
  /** At most this many connections in this run. */
  limit?: number;
  /** Re-seal current values too: after replacing the KMS key, every "k1." value is current by its form. */
  all?: boolean;
  /** Asked before each page: true ends the run there (the handler's deadline). */
  stop?: () => boolean;
  /** After each page: the counts so far and the cursor to resume from. */
  onPage?: (progress: { counts: ResealCounts; cursor?: string }) => void;
  pageSize?: number;
  /** Connections re-sealed at once: each is a Decrypt, a GenerateDataKey and a conditional write. */
  concurrency?: number;
}

export interface ResealResult {
  counts: ResealCounts;
  /** Every connection was visited. */
  done: boolean;
  /** Where to resume when not done (absent: from the start). */
  cursor?: string;
}

export const RESEAL_PAGE = 100;
const RESEAL_CONCURRENCY = 8;

export async function resealTokens(deps: ResealDeps, opts: ResealOptions = {}): Promise<ResealResult> {
  const counts: ResealCounts = { scanned: 0, resealed: 0, current: 0, changed: 0, unreadable: 0 };
  const limit = opts.limit ?? Number.POSITIVE_INFINITY;
  let cursor = opts.cursor;
  for (;;) {
    if (counts.scanned >= limit || opts.stop?.()) return { counts, done: false, cursor };
    const page = await deps.store.sealedTokenPage(
      Math.min(opts.pageSize ?? RESEAL_PAGE, limit - counts.scanned),
      cursor,
    );
    await eachAtMost(opts.concurrency ?? RESEAL_CONCURRENCY, page.items, (item) =>
      resealOne(deps, item.user_id, item.sealed, opts.all === true, counts),
    );
    cursor = page.items.at(-1)?.user_id ?? cursor;
    opts.onPage?.({ counts: { ...counts }, cursor });
    if (!page.next) return { counts, done: true };
  }
}

async function resealOne(deps: ResealDeps, user: string, sealed: string, all: boolean, counts: ResealCounts) {
  counts.scanned++;
  if (!all && deps.sealer.isCurrent(sealed)) {
    counts.current++;
    return;
  }
  let token: string;
  try {
    token = await deps.sealer.open(sealed, tokenContext(user));
  } catch (err) {
    // The value's own fault: the rest can still move. A refused or silent KMS stops the run (it would fail them all).
    if (!(err instanceof SecretUnreadableError)) throw err;
    counts.unreadable++;
    deps.log.warn('sync_reseal_unreadable', { user_id: user, reason: err.message });
    return;
  }
  const next = await deps.sealer.seal(token, tokenContext(user));
  if (await deps.store.replaceSealedToken(user, sealed, next)) counts.resealed++;
  else counts.changed++;
}

/** `work` over `items`, at most `n` at a time; after a failure none starts, and the first failure is thrown. */
async function eachAtMost<T>(n: number, items: T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const item = items[next++];
      await work(item).catch((err: unknown) => {
        failed = true;
        throw err;
      });
    }
  };
  const settled = await Promise.allSettled(Array.from({ length: Math.min(n, items.length) }, worker));
  const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failure) throw failure.reason;
}

/** The reseal's input at its edges (the handler's event, the CLI's flags): `{cursor?, limit?, all?}`. */
export function parseResealInput(value: unknown): Pick<ResealOptions, 'cursor' | 'limit' | 'all'> {
  const v = (value ?? {}) as Record<string, unknown>;
  if (typeof v !== 'object' || Array.isArray(v)) throw new ResealInputError('the input must be an object');
  const unknown = Object.keys(v).filter((k) => !['cursor', 'limit', 'all'].includes(k));
  if (unknown.length) throw new ResealInputError(`unknown fields: ${unknown.join(', ')}`);
  const { cursor, limit, all } = v;
  if (cursor !== undefined && (typeof cursor !== 'string' || !/^[0-9A-Za-z]{1,64}$/.test(cursor)))
    throw new ResealInputError('`cursor` must be the cursor a run returned (a user id)');
  if (limit !== undefined && !(typeof limit === 'number' && Number.isSafeInteger(limit) && limit >= 1))
    throw new ResealInputError('`limit` must be a whole number of connections, at least 1');
  if (all !== undefined && typeof all !== 'boolean') throw new ResealInputError('`all` must be true or false');
  return { cursor: cursor as string | undefined, limit: limit as number | undefined, all: all as boolean | undefined };
}
