import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { withCas } from '../aws/conditions';
import { Clock, isoTime, systemClock } from '../clock';
import { newId } from '../ident';
import { emitMetric } from '../metrics';
import { setTimeout as sleep } from 'node:timers/promises';
import { backoff, DEFAULT_RETRY, transactWrite } from '../aws/transact';
import { TransactionConflictError } from '../aws/errors';
import { TransactionCancelledError } from '../aws/errors';
import { DynamoDownloadReads } from './dynamodb-reads';
import { DynamoLegacyImport } from './dynamodb-legacy';
import { refusedGuards, transactItems } from './dynamodb-plan';
import { DownloadNotFoundError, InfohashTakenError } from './errors';
import {
  afterCreateRefused,
  Decision,
  ownerOfAll,
  planActivate,
  planAppend,
  planCreate,
  planDetails,
  planFailTimedOut,
  planKeepWaiting,
  planMerge,
  planWarn,
  planSetState,
  planShare,
  refusalOf,
  refuseReactivation,
  ShareStep,
  WritePlan,
} from './guards';
import { shareRemovalKey } from './keys';
import { Infohash, MAX_INFOHASHES, sortHashes } from './infohash';
import {
  ActiveState,
  Download,
  DownloadDetails,
  DownloadState,
  FailureReason,
  isActive,
  NewDownload,
  ReviewReason,
} from './model';
import type { DownloadStore, LegacyCheckStore, LegacyImportOutcome, LegacyImportStore } from './store';

export interface StoreDeps {
  documents: DynamoDBDocumentClient;
  table: string;
  now?: Clock;
}

/** Bounds the read-modify-CAS loops: each turn is lost only to a concurrent writer. */
const MAX_CAS_TURNS = 20;
/** Hashes this container ingested lately: a hint (never a guard) that a re-ingest is likely. */
const RECENT_HASHES = 10_000;

/**
 * The downloads store on DynamoDB: each guarded operation reads the rows,
 * asks guards.ts for a plan (or a refusal), and executes the plan as ONE
 * transaction. What is decided lives in guards.ts; what is read, in
 * dynamodb-reads.ts; the legacy import's writes, in dynamodb-legacy.ts (one
 * store object serves all three interfaces, so callers build one).
 */
export class DynamoDownloadStore
  extends DynamoDownloadReads
  implements DownloadStore, LegacyImportStore, LegacyCheckStore
{
  private readonly now: Clock;
  private readonly legacy: DynamoLegacyImport;
  /** hash → the download that held it when this container last ingested it: a hint, never a guard. */
  private readonly recent = new Map<string, string>();
  /** Creates in flight in this process, by their sorted hashes. */
  private readonly inflight = new Map<string, Promise<{ created: boolean; download: Download }>>();

  constructor(deps: StoreDeps) {
    super(deps);
    this.now = deps.now ?? systemClock;
    this.legacy = new DynamoLegacyImport(deps.documents, deps.table);
  }

  async createDownloadIfNoActive(
    input: NewDownload,
    hashes: Infohash[],
  ): Promise<{ created: boolean; download: Download }> {
    const wanted = sortHashes(hashes);
    if (wanted.length === 0 || wanted.length > MAX_INFOHASHES)
      throw new RangeError(`1..${MAX_INFOHASHES} infohashes required`);
    if (!isActive(input.state)) throw new RangeError(`a new download must be active, not ${input.state}`);

    // Callers in this process asking for the same hashes while one is already
    // creating or deduping them wait for it, then confirm its answer with one
    // consistent read (the owner may have finished meanwhile).
    const key = wanted.map((h) => h.infohash).join('|');
    const running = this.inflight.get(key);
    if (running) {
      const leader = await running.catch(() => undefined);
      const owner = leader && (await this.ownerIfHolding(leader.download.id, wanted));
      if (owner) return { created: false, download: owner };
    }
    const attempt = this.createOrDedup(input, wanted);
    this.inflight.set(key, attempt);
    try {
      return await attempt;
    } finally {
      if (this.inflight.get(key) === attempt) this.inflight.delete(key);
    }
  }

  private async createOrDedup(
    input: NewDownload,
    wanted: Infohash[],
  ): Promise<{ created: boolean; download: Download }> {
    // Fast dedup: for a hash this container ingested lately we know the likely owner,
    // and ONE consistent BatchGet of the guard and that owner answers an exact
    // re-ingest without a transaction. After a lost conflict, the guard is read to
    // learn the winner. Reads only: the transaction stays the only writer.
    const likelyOwner = this.recent.get(wanted[0].infohash);
    for (let turn = 0; turn < MAX_CAS_TURNS; turn++) {
      if (turn === 0 && likelyOwner) {
        const owner = await this.ownerIfHolding(likelyOwner, wanted);
        if (owner) return { created: false, download: owner };
      } else if (turn > 0) {
        const owner = await this.activeOwnerOfAll(wanted);
        if (owner) return this.remember({ created: false, download: owner });
      }
      // One reading: the id's time and created_at name the same instant.
      const ms = this.now();
      const at = isoTime(ms);
      const download: Download = {
        id: newId(ms),
        ...input,
        infohashes: wanted,
        created_at: at,
        updated_at: at,
        revision: 1,
      };
      try {
        // A conflict is another writer on our guards: read what it wrote rather than queue behind it.
        await this.execute(planCreate(download), `create:${download.id}`, { conflictAttempts: 1 });
        transitioned(download, undefined);
        return this.remember({ created: true, download });
      } catch (err) {
        if (err instanceof TransactionConflictError) {
          await sleep(backoff(turn + 1, DEFAULT_RETRY));
          continue;
        }
        const next = afterCreateRefused(refusedGuards(err));
        if ('unexplained' in next) throw err;
        if ('merge' in next) {
          await this.mergeInto(next.merge.survivorId, next.merge.absorbed);
          continue;
        }
        // Dedup onto the owner. If it left the active set meanwhile, its guards are
        // gone: go round and try to create again.
        try {
          const owner = await this.appendHashes(next.dedupOnto, wanted, true);
          if (owner === 'not-active') continue;
          return this.remember({ created: false, download: owner });
        } catch (appendErr) {
          if (appendErr instanceof DownloadNotFoundError || appendErr instanceof InfohashTakenError) continue;
          throw appendErr;
        }
      }
    }
    throw new TransactionConflictError(MAX_CAS_TURNS);
  }

  async activateIfNoOtherActive(id: string, to: ActiveState): Promise<Download> {
    if (!isActive(to)) throw new RangeError(`activate needs an active state, not ${to}`);
    return this.cas(id, (current) =>
      this.decided(planActivate(current, to, isoTime(this.now())), 'activate', current.state),
    );
  }

  async addInfohashes(id: string, hashes: Infohash[]): Promise<Download> {
    return (await this.appendHashes(id, hashes, false)) as Download; // 'not-active' only when required
  }

  private appendHashes(id: string, hashes: Infohash[], requireActive: boolean): Promise<Download | 'not-active'> {
    return this.cas<Download | 'not-active'>(id, async (current) => {
      const decision = planAppend(current, hashes, isoTime(this.now()), requireActive);
      return 'notActive' in decision ? 'not-active' : this.decided(decision, 'append');
    });
  }

  async setDownloadState(id: string, from: DownloadState, to: DownloadState, review?: ReviewReason): Promise<Download> {
    const refused = refuseReactivation(id, from, to);
    if (refused) throw refused;
    return this.cas(id, (current) =>
      this.decided(planSetState(current, from, to, review, isoTime(this.now())), 'state', current.state),
    );
  }

  async updateDetails(id: string, details: DownloadDetails): Promise<Download> {
    if (details.progress !== undefined && !(details.progress >= 0 && details.progress <= 1))
      throw new RangeError('progress must be within 0..1');
    return this.cas(id, (current) => this.decided(planDetails(current, details, isoTime(this.now())), 'details'));
  }

  async warnIfNoProgressSince(id: string, reason: FailureReason, basis: string): Promise<Download> {
    return this.cas(id, (current) => this.decided(planWarn(current, reason, basis, isoTime(this.now())), 'warn'));
  }

  async keepWaiting(id: string): Promise<Download> {
    return this.cas(id, (current) => this.decided(planKeepWaiting(current, isoTime(this.now())), 'keep-waiting'));
  }

  async recordShare(id: string, step: ShareStep): Promise<Download> {
    return this.cas(id, (current) => this.decided(planShare(current, step, isoTime(this.now())), 'share'));
  }

  async dropShareRemoval(id: string): Promise<void> {
    await this.execute({ writes: [{ delete: shareRemovalKey(id) }] }, `share-drop:${id}`);
  }

  async failTimedOut(id: string, reason: FailureReason, warnedAt: string): Promise<Download> {
    return this.cas(id, (current) =>
      this.decided(planFailTimedOut(current, reason, warnedAt, isoTime(this.now())), 'timeout', current.state),
    );
  }

  // --- the legacy import: its own writes (dynamodb-legacy.ts) --------------------

  importDownloadIfNoActive(download: Download, legacyId: string): Promise<LegacyImportOutcome> {
    return this.legacy.importDownloadIfNoActive(download, legacyId);
  }
  importDownloadsIfNoActive(rows: Array<{ download: Download; legacyId: string }>): Promise<LegacyImportOutcome[]> {
    return this.legacy.importDownloadsIfNoActive(rows);
  }
  legacyImports(): Promise<Map<string, string>> {
    return this.legacy.legacyImports();
  }
  legacyImportTime(now: number): Promise<number> {
    return this.legacy.legacyImportTime(now);
  }
  downloadsById(ids: string[]): Promise<Map<string, Download>> {
    return this.legacy.downloadsById(ids);
  }
  guardsOf(hashes: string[]): Promise<Map<string, string>> {
    return this.legacy.guardsOf(hashes);
  }
  membersOf(hashes: string[]): Promise<Map<string, string[]>> {
    return this.legacy.membersOf(hashes);
  }

  // --- executing plans --------------------------------------------------------------

  /** A decision carried out: the refusal thrown, nothing written, or the plan written and its result returned. */
  private async decided(decision: Decision, operation: string, from?: DownloadState): Promise<Download> {
    if ('refused' in decision) throw decision.refused;
    if ('unchanged' in decision) return decision.unchanged;
    const { id, revision } = decision.next;
    await this.execute(decision.write, `${operation}:${id}@${revision - 1}`);
    if (from !== undefined) transitioned(decision.next, from);
    return decision.next;
  }

  /** ONE transaction of the plan's writes; a guard that refused it becomes the plan's typed refusal. */
  private async execute(plan: WritePlan, operation: string, opts: { conflictAttempts?: number } = {}): Promise<void> {
    try {
      await transactWrite(this.documents, transactItems(this.table, plan), { operation, ...opts });
    } catch (err) {
      throw refusalOf(plan.guardRefusal, refusedGuards(err)) ?? err;
    }
  }

  /**
   * Read-modify-CAS: `attempt` writes conditioned on the revision it was given;
   * when another writer moved the revision first, re-read and go again.
   */
  private cas<T>(id: string, attempt: (current: Download) => Promise<T>): Promise<T> {
    return withCas(async () => attempt(await this.mustGet(id)), MAX_CAS_TURNS);
  }

  /**
   * One transaction per absorbed download, in order (guards.ts `planMerge`).
   * A row that changed under us, or a write a concurrent writer won, ends the
   * merge: the caller reads again.
   */
  private async mergeInto(survivorId: string, absorbed: string[]): Promise<void> {
    for (const victimId of absorbed) {
      const [survivor, victim] = await Promise.all([this.get(survivorId), this.get(victimId)]);
      const plan = planMerge(survivorId, survivor, victim, isoTime(this.now()));
      if ('stale' in plan) return;
      if ('refused' in plan) throw plan.refused;
      try {
        await this.execute(plan, `merge:${victimId}@${victim!.revision}`);
        transitioned({ ...victim!, state: 'cancelled' }, victim!.state);
      } catch (err) {
        if (err instanceof TransactionCancelledError) return;
        throw err;
      }
    }
  }

  // --- dedup reads: hints and confirmations, never guards ---------------------------

  /** The active download holding EVERY hash, from consistent reads; undefined if none (or split). */
  private async activeOwnerOfAll(hashes: Infohash[]): Promise<Download | undefined> {
    const holder = await this.guardHolder(hashes[0].infohash);
    if (!holder) return undefined;
    return ownerOfAll(holder, await this.get(holder), hashes);
  }

  /** One consistent BatchGet of the first hash's guard and the download we expect holds it. */
  private async ownerIfHolding(id: string, hashes: Infohash[]): Promise<Download | undefined> {
    const { holder, download } = await this.guardAndDownload(hashes[0].infohash, id);
    return ownerOfAll(holder, download, hashes);
  }

  private remember<T extends { download: Download }>(result: T): T {
    for (const h of result.download.infohashes) {
      this.recent.delete(h.infohash);
      this.recent.set(h.infohash, result.download.id);
      if (this.recent.size > RECENT_HASHES) this.recent.delete(this.recent.keys().next().value!);
    }
    return result;
  }
}

/**
 * A download's state moved, as a committed transaction wrote it (the only place every move passes:
 * ingest, the poll, the UI, the bot, merges): DownloadTransitions by the state entered.
 */
function transitioned(download: Pick<Download, 'id' | 'state'>, from: DownloadState | undefined): void {
  if (from === download.state) return;
  emitMetric('DownloadTransitions', 1, { state: download.state }, { download_id: download.id, from });
}
