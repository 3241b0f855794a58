import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { batchGetAll } from '../aws/batch';
import { conditionFailed, withCas } from '../aws/conditions';
import { queryAll } from '../aws/query';
import { Clock, isoTime, parseIsoTime, systemClock } from '../clock';
import { newId } from '../ident';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  backoff,
  DEFAULT_RETRY,
  TransactionCancelledError,
  TransactionConflictError,
  transactWrite,
  TransactItem,
} from '../aws/transact';
import {
  ActiveExistsError,
  DownloadNotFoundError,
  InfohashTakenError,
  InvalidTransitionError,
  TooManyInfohashesError,
} from './errors';
import { Infohash, MAX_INFOHASHES, sortHashes } from './infohash';
import {
  downloadFromItem,
  downloadKey,
  downloadToItem,
  guardItem,
  guardKey,
  infohashPartition,
  LEGACY_ID_PREFIX,
  LEGACY_IMPORT_KEY,
  LEGACY_PARTITION,
  legacyIdFromSortKey,
  legacyIdItem,
  legacyImportItem,
  LIST_INDEX,
  LIST_PARTITION,
  listIndexKeys,
  MEMBERSHIP_SORT_PREFIX,
  membershipItem,
  PREFIX_INDEX,
  prefixShard,
} from './keys';
import {
  ACTIVE_STATES,
  ActiveState,
  Download,
  DownloadDetails,
  DownloadState,
  isActive,
  NewDownload,
  ReviewReason,
} from './model';
import type {
  DownloadStore,
  LegacyCheckStore,
  LegacyImportOutcome,
  LegacyImportStore,
  ListPage,
  ListQuery,
} from './store';

export interface StoreDeps {
  documents: DynamoDBDocumentClient;
  table: string;
  now?: Clock;
}

/** Bounds the read-modify-CAS loops: each turn is lost only to a concurrent writer. */
const MAX_CAS_TURNS = 20;
/** Name search filters the newest-first index; this bounds the items one call reads. */
const NAME_SEARCH_BUDGET = 1000;
const PREFIX_SEARCH_CAP = 1000;
/** Reads in flight at once for the legacy import's check (BatchGets of 100 keys, Queries of one hash). */
const CHECK_READS_IN_FLIGHT = 8;
/** DynamoDB's limit of items in one TransactWriteItems. */
const MAX_TRANSACT_ITEMS = 100;
/** Hashes this container ingested lately: a hint (never a guard) that a re-ingest is likely. */
const RECENT_HASHES = 10_000;

export class DynamoDownloadStore implements DownloadStore, LegacyImportStore, LegacyCheckStore {
  private readonly documents: DynamoDBDocumentClient;
  private readonly table: string;
  private readonly now: Clock;
  /** hash → the download that held it when this container last ingested it: a hint, never a guard. */
  private readonly recent = new Map<string, string>();
  /** Creates in flight in this process, by their sorted hashes. */
  private readonly inflight = new Map<string, Promise<{ created: boolean; download: Download }>>();

  constructor(deps: StoreDeps) {
    this.documents = deps.documents;
    this.table = deps.table;
    this.now = deps.now ?? systemClock;
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
    // learn the winner. Reads only: the transaction stays the only writer, and an
    // owner that is active and holds every hash IS the guards' holder (guards move
    // in the same transaction as the state).
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
        await transactWrite(
          this.documents,
          [
            this.put(downloadToItem(download), 'attribute_not_exists(PK)'),
            ...wanted.flatMap((h) => [
              this.put(membershipItem(h, download.id)),
              this.put(guardItem(h.infohash, download.id, at), 'attribute_not_exists(PK)'),
            ]),
          ],
          // A conflict is another writer on our guards: read what it wrote rather than queue behind it.
          { operation: `create:${download.id}`, conflictAttempts: 1 },
        );
        return this.remember({ created: true, download });
      } catch (err) {
        if (err instanceof TransactionConflictError) {
          await sleep(backoff(turn + 1, DEFAULT_RETRY));
          continue;
        }
        const owners = [...new Set(guardOwners(err).map((o) => o.ownerId))];
        if (owners.length === 0) throw err;
        if (owners.length > 1) {
          // The call's hashes are split across active downloads (each ingested with
          // one hash of this torrent): they are one torrent, so merge into the oldest.
          await this.mergeIntoOldest(owners);
          continue;
        }
        // Dedup onto the owner. If it left the active set meanwhile, its guards are
        // gone: go round and try to create again.
        try {
          return this.remember({
            created: false,
            download: await this.appendHashes(owners[0], wanted, { requireActive: true }),
          });
        } catch (appendErr) {
          if (
            appendErr instanceof OwnerNotActive ||
            appendErr instanceof DownloadNotFoundError ||
            appendErr instanceof InfohashTakenError
          )
            continue;
          throw appendErr;
        }
      }
    }
    throw new TransactionConflictError(MAX_CAS_TURNS);
  }

  async activateIfNoOtherActive(id: string, to: ActiveState): Promise<Download> {
    if (!isActive(to)) throw new RangeError(`activate needs an active state, not ${to}`);
    return this.cas(id, async (current) => {
      const at = isoTime(this.now());
      const { review_reason: _r, missing_since: _m, ...rest } = current;
      const next: Download = { ...rest, state: to, updated_at: at, revision: current.revision + 1 };
      try {
        await transactWrite(
          this.documents,
          [
            this.casUpdate(next, current.revision),
            ...current.infohashes.map((h) => this.holdGuard(h.infohash, id, at)),
          ],
          { operation: `activate:${id}@${current.revision}` },
        );
      } catch (err) {
        throw guardRefusal(err, ActiveExistsError);
      }
      return next;
    });
  }

  addInfohashes(id: string, hashes: Infohash[]): Promise<Download> {
    return this.appendHashes(id, hashes, { requireActive: false });
  }

  private async appendHashes(id: string, hashes: Infohash[], opts: { requireActive: boolean }): Promise<Download> {
    return this.cas(id, async (current) => {
      if (opts.requireActive && !isActive(current.state)) throw new OwnerNotActive();
      const held = new Set(current.infohashes.map((h) => h.infohash));
      const missing = sortHashes(hashes).filter((h) => !held.has(h.infohash));
      if (missing.length === 0) return current;
      if (held.size + missing.length > MAX_INFOHASHES) throw new TooManyInfohashesError(id, MAX_INFOHASHES);

      const at = isoTime(this.now());
      const next: Download = {
        ...current,
        infohashes: sortHashes([...current.infohashes, ...missing]),
        updated_at: at,
        revision: current.revision + 1,
      };
      const active = isActive(current.state);
      try {
        await transactWrite(
          this.documents,
          [
            this.casUpdate(next, current.revision),
            ...missing.flatMap((h) => [
              this.put(membershipItem(h, id)),
              ...(active ? [this.holdGuard(h.infohash, id, at)] : []),
            ]),
          ],
          { operation: `append:${id}@${current.revision}` },
        );
      } catch (err) {
        throw guardRefusal(err, InfohashTakenError);
      }
      return next;
    });
  }

  async setDownloadState(id: string, from: DownloadState, to: DownloadState, review?: ReviewReason): Promise<Download> {
    if (!isActive(from) && isActive(to)) {
      throw new InvalidTransitionError(id, from, to, 'a finished download becomes active again only through retry');
    }
    return this.cas(id, async (current) => {
      if (current.state !== from)
        throw new InvalidTransitionError(id, current.state, to, `the download is ${current.state}, not ${from}`);
      if (from === to) return current;
      if (!isActive(from)) throw new InvalidTransitionError(id, from, to, 'a finished download stays finished');

      const at = isoTime(this.now());
      const next: Download = {
        ...current,
        state: to,
        updated_at: at,
        revision: current.revision + 1,
        ...(to === 'cancelled' ? { cancelled_at: at } : {}),
        ...(review && !isActive(to) ? { review_reason: review } : {}),
      };
      await transactWrite(
        this.documents,
        [
          this.casUpdate(next, current.revision),
          // Leaving the active set releases exactly our own guards.
          ...(isActive(to)
            ? []
            : current.infohashes.map((h): TransactItem => ({
                Delete: {
                  TableName: this.table,
                  Key: guardKey(h.infohash),
                  ConditionExpression: 'download_id = :self',
                  ExpressionAttributeValues: { ':self': id },
                },
              }))),
        ],
        { operation: `state:${id}@${current.revision}` },
      );
      return next;
    });
  }

  async updateDetails(id: string, details: DownloadDetails): Promise<Download> {
    if (details.progress !== undefined && !(details.progress >= 0 && details.progress <= 1))
      throw new RangeError('progress must be within 0..1');
    return this.cas(id, async (current) => {
      const next: Download = { ...current };
      if (details.progress !== undefined) next.progress = details.progress;
      if (details.missing_since === null) delete next.missing_since;
      else if (details.missing_since !== undefined) next.missing_since = details.missing_since;
      if (next.progress === current.progress && next.missing_since === current.missing_since) return current;
      next.updated_at = isoTime(this.now());
      next.revision = current.revision + 1;
      await transactWrite(this.documents, [this.casUpdate(next, current.revision)], {
        operation: `details:${id}@${current.revision}`,
      });
      return next;
    });
  }

  async listActive(): Promise<Download[]> {
    const items = await queryAll(this.documents, {
      TableName: this.table,
      IndexName: LIST_INDEX,
      KeyConditionExpression: 'GSI1PK = :p',
      FilterExpression: '#state IN (' + ACTIVE_STATES.map((_, i) => `:s${i}`).join(', ') + ')',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: {
        ':p': LIST_PARTITION,
        ...Object.fromEntries(ACTIVE_STATES.map((s, i) => [`:s${i}`, s])),
      },
    });
    return items.map(downloadFromItem);
  }

  /** The active download holding EVERY hash, from consistent reads; undefined if none (or split). */
  private async activeOwnerOfAll(hashes: Infohash[]): Promise<Download | undefined> {
    const guard = await this.documents.send(
      new GetCommand({ TableName: this.table, Key: guardKey(hashes[0].infohash), ConsistentRead: true }),
    );
    if (!guard.Item) return undefined;
    const owner = await this.get(guard.Item.download_id as string);
    if (!owner || !isActive(owner.state)) return undefined;
    const held = new Set(owner.infohashes.map((h) => h.infohash));
    return hashes.every((h) => held.has(h.infohash)) ? owner : undefined;
  }

  private remember<T extends { download: Download }>(result: T): T {
    for (const h of result.download.infohashes) {
      this.recent.delete(h.infohash);
      this.recent.set(h.infohash, result.download.id);
      if (this.recent.size > RECENT_HASHES) this.recent.delete(this.recent.keys().next().value!);
    }
    return result;
  }

  /** One consistent BatchGet of the first hash's guard and the download we expect holds it. */
  private async ownerIfHolding(id: string, hashes: Infohash[]): Promise<Download | undefined> {
    const items = await batchGetAll(this.documents, this.table, [guardKey(hashes[0].infohash), downloadKey(id)], {
      consistentRead: true,
    });
    const guard = items.find(
      (i) => i.PK === guardKey(hashes[0].infohash).PK && i.SK === guardKey(hashes[0].infohash).SK,
    );
    const row = items.find((i) => i.PK === downloadKey(id).PK);
    if (!guard || !row || guard.download_id !== id) return undefined;
    const owner = downloadFromItem(row);
    const held = new Set(owner.infohashes.map((h) => h.infohash));
    return isActive(owner.state) && hashes.every((h) => held.has(h.infohash)) ? owner : undefined;
  }

  /**
   * Read-modify-CAS: `attempt` writes conditioned on the revision it was given;
   * when another writer moved the revision first, re-read and go again.
   */
  private cas<T>(id: string, attempt: (current: Download) => Promise<T>): Promise<T> {
    return withCas(async () => attempt(await this.mustGet(id)), MAX_CAS_TURNS);
  }

  /**
   * One transaction per absorbed download: it turns `cancelled` with
   * `merged_into`, and its hashes (memberships and guards) move to the survivor.
   * Both rows are CAS on their revision, each moved guard on its old holder.
   */
  private async mergeIntoOldest(ownerIds: string[]): Promise<void> {
    const [survivorId, ...absorbed] = [...ownerIds].sort();
    for (const victimId of absorbed) {
      const [survivor, victim] = await Promise.all([this.get(survivorId), this.get(victimId)]);
      if (!survivor || !victim || !isActive(survivor.state) || !isActive(victim.state)) return; // changed under us: caller goes round
      const held = new Set(survivor.infohashes.map((h) => h.infohash));
      const moving = victim.infohashes.filter((h) => !held.has(h.infohash));
      if (survivor.infohashes.length + moving.length > MAX_INFOHASHES)
        throw new TooManyInfohashesError(survivorId, MAX_INFOHASHES);
      const at = isoTime(this.now());
      try {
        await transactWrite(
          this.documents,
          [
            this.casUpdate(
              {
                ...survivor,
                infohashes: sortHashes([...survivor.infohashes, ...moving]),
                updated_at: at,
                revision: survivor.revision + 1,
              },
              survivor.revision,
            ),
            this.casUpdate(
              { ...victim, state: 'cancelled', merged_into: survivorId, updated_at: at, revision: victim.revision + 1 },
              victim.revision,
            ),
            ...moving.flatMap((h) => [
              this.put(membershipItem(h, survivorId)),
              this.put(guardItem(h.infohash, survivorId, at), 'download_id = :victim', { ':victim': victimId }),
            ]),
          ],
          { operation: `merge:${victimId}@${victim.revision}` },
        );
      } catch (err) {
        if (err instanceof TransactionCancelledError) return; // a concurrent writer won; the caller re-reads
        throw err;
      }
    }
  }

  async importDownloadIfNoActive(download: Download, legacyId: string): Promise<LegacyImportOutcome> {
    const imported = this.importable(download);
    try {
      await transactWrite(this.documents, this.importItems(imported, legacyId));
      return { outcome: 'imported', download: imported };
    } catch (err) {
      const done = alreadyImported(err);
      if (done) return { outcome: 'already', id: done };
      const owner = guardOwners(err)[0];
      if (!owner) throw err;
      // The owner keeps the hash; this row arrives finished, its history kept.
      const failed: Download = { ...imported, state: 'failed' };
      try {
        await transactWrite(this.documents, this.importItems(failed, legacyId));
      } catch (again) {
        const doneMeanwhile = alreadyImported(again);
        if (doneMeanwhile) return { outcome: 'already', id: doneMeanwhile };
        throw again;
      }
      return { outcome: 'conflict', download: failed, infohash: owner.infohash, ownerId: owner.ownerId };
    }
  }

  /**
   * The usual case in one transaction for many rows (a transaction per row
   * costs the emulator and the service far more than its items): rows are cut
   * into transactions of at most 100 items; each is written whole, or, when
   * any of its rows is refused, not at all, and its rows go again one by one
   * (a row that fails alone is an `error` outcome, not the batch's).
   */
  async importDownloadsIfNoActive(
    rows: Array<{ download: Download; legacyId: string }>,
  ): Promise<LegacyImportOutcome[]> {
    const hashes = rows.flatMap((r) => r.download.infohashes.map((h) => h.infohash));
    if (new Set(hashes).size !== hashes.length)
      throw new RangeError('the rows of one import batch must not share an infohash');
    const chunks: Array<Array<{ download: Download; legacyId: string; items: TransactItem[] }>> = [[]];
    for (const r of rows) {
      const download = this.importable(r.download);
      const items = this.importItems(download, r.legacyId);
      const last = chunks[chunks.length - 1];
      if (last.reduce((n, c) => n + c.items.length, 0) + items.length > MAX_TRANSACT_ITEMS) chunks.push([]);
      chunks[chunks.length - 1].push({ download, legacyId: r.legacyId, items });
    }
    const outcomes = await Promise.all(
      chunks.map(async (chunk): Promise<LegacyImportOutcome[]> => {
        if (chunk.length > 1) {
          try {
            await transactWrite(
              this.documents,
              chunk.flatMap((c) => c.items),
            );
            return chunk.map((c) => ({ outcome: 'imported', download: c.download }));
          } catch (err) {
            if (!(err instanceof TransactionCancelledError)) throw err;
          }
        }
        // Alone, a row's failure is its own: its neighbours' outcomes are still reported.
        return Promise.all(
          chunk.map((c) =>
            this.importDownloadIfNoActive(c.download, c.legacyId).catch((error: Error): LegacyImportOutcome => ({
              outcome: 'error',
              error,
            })),
          ),
        );
      }),
    );
    return outcomes.flat();
  }

  private importable(download: Download): Download {
    const hashes = sortHashes(download.infohashes);
    if (hashes.length === 0 || hashes.length > MAX_INFOHASHES)
      throw new RangeError(`1..${MAX_INFOHASHES} infohashes required`);
    return { ...download, infohashes: hashes, revision: 1 };
  }

  private importItems(d: Download, legacyId: string): TransactItem[] {
    return [
      // First: a cancelled import names the item that refused it, and this one means "done before".
      this.put(legacyIdItem(legacyId, d.id), 'attribute_not_exists(PK)'),
      this.put(downloadToItem(d), 'attribute_not_exists(PK)'),
      ...d.infohashes.flatMap((h) => [
        this.put(membershipItem(h, d.id)),
        ...(isActive(d.state) ? [this.put(guardItem(h.infohash, d.id, d.updated_at), 'attribute_not_exists(PK)')] : []),
      ]),
    ];
  }

  async legacyImports(): Promise<Map<string, string>> {
    const items = await queryAll(this.documents, {
      TableName: this.table,
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :id)',
      ExpressionAttributeValues: { ':pk': LEGACY_PARTITION, ':id': LEGACY_ID_PREFIX },
      ConsistentRead: true,
    });
    return new Map(items.map((i) => [legacyIdFromSortKey(i.SK as string), i.download_id as string]));
  }

  async legacyImportTime(now: number): Promise<number> {
    try {
      await this.documents.send(
        new PutCommand({
          TableName: this.table,
          Item: legacyImportItem(isoTime(now)),
          ConditionExpression: 'attribute_not_exists(PK)',
        }),
      );
      return now;
    } catch (err) {
      if (!conditionFailed(err)) throw err;
    }
    // An earlier run wrote the marker: its time stands.
    const { Item } = await this.documents.send(
      new GetCommand({ TableName: this.table, Key: LEGACY_IMPORT_KEY, ConsistentRead: true }),
    );
    const started = parseIsoTime(Item?.started_at);
    if (started === undefined) throw new Error('the legacy import marker has no valid started_at');
    return started;
  }

  async downloadsById(ids: string[]): Promise<Map<string, Download>> {
    const chunks = [];
    const unique = [...new Set(ids)]; // BatchGet refuses a key twice
    for (let i = 0; i < unique.length; i += 100) chunks.push(unique.slice(i, i + 100));
    const found = new Map<string, Download>();
    await eachLimited(chunks, CHECK_READS_IN_FLIGHT, async (chunk) => {
      const items = await batchGetAll(this.documents, this.table, chunk.map(downloadKey), { consistentRead: true });
      for (const item of items) found.set(item.id as string, downloadFromItem(item));
    });
    return found;
  }

  async guardsOf(hashes: string[]): Promise<Map<string, string>> {
    const chunks = [];
    const unique = [...new Set(hashes)];
    for (let i = 0; i < unique.length; i += 100) chunks.push(unique.slice(i, i + 100));
    const guards = new Map<string, string>();
    await eachLimited(chunks, CHECK_READS_IN_FLIGHT, async (chunk) => {
      const items = await batchGetAll(this.documents, this.table, chunk.map(guardKey), { consistentRead: true });
      for (const item of items) guards.set(item.infohash as string, item.download_id as string);
    });
    return guards;
  }

  async membersOf(hashes: string[]): Promise<Map<string, string[]>> {
    const members = new Map<string, string[]>();
    await eachLimited([...new Set(hashes)], CHECK_READS_IN_FLIGHT, async (infohash) => {
      const items = await queryAll(this.documents, {
        TableName: this.table,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :dl)',
        ExpressionAttributeValues: { ':pk': infohashPartition(infohash), ':dl': MEMBERSHIP_SORT_PREFIX },
        ConsistentRead: true,
      });
      members.set(
        infohash,
        items.map((i) => i.download_id as string),
      );
    });
    return members;
  }

  async get(id: string): Promise<Download | undefined> {
    const { Item } = await this.documents.send(
      new GetCommand({ TableName: this.table, Key: downloadKey(id), ConsistentRead: true }),
    );
    return Item ? downloadFromItem(Item) : undefined;
  }

  async findActiveByInfohash(infohash: string): Promise<Download | undefined> {
    const { Item } = await this.documents.send(
      new GetCommand({ TableName: this.table, Key: guardKey(infohash), ConsistentRead: true }),
    );
    return Item ? this.get(Item.download_id as string) : undefined;
  }

  async historyOfInfohash(infohash: string): Promise<Download[]> {
    const memberships = await queryAll(this.documents, {
      TableName: this.table,
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :dl)',
      ExpressionAttributeValues: { ':pk': infohashPartition(infohash), ':dl': MEMBERSHIP_SORT_PREFIX },
      ScanIndexForward: false,
    });
    return this.getMany(memberships.map((m) => m.download_id as string));
  }

  async list(query: ListQuery): Promise<ListPage> {
    const q = query.q?.trim();
    if (q && /^[0-9a-f]{4,64}$/i.test(q)) return this.listByHashPrefix(q.toLowerCase(), query);
    return this.listNewestFirst(q?.toLowerCase() || undefined, query);
  }

  private async listNewestFirst(nameContains: string | undefined, query: ListQuery): Promise<ListPage> {
    const items: Download[] = [];
    let startKey = query.after ? { ...downloadKey(query.after), ...listIndexKeys(query.after) } : undefined;
    const filtered = nameContains !== undefined || query.state !== undefined;
    const filters = [...(nameContains ? ['contains(name_lc, :q)'] : []), ...(query.state ? ['#state = :state'] : [])];
    let budget = filtered ? NAME_SEARCH_BUDGET : query.limit;
    while (items.length < query.limit && budget > 0) {
      const page = await this.documents.send(
        new QueryCommand({
          TableName: this.table,
          IndexName: LIST_INDEX,
          KeyConditionExpression: 'GSI1PK = :p',
          ExpressionAttributeValues: {
            ':p': LIST_PARTITION,
            ...(nameContains ? { ':q': nameContains } : {}),
            ...(query.state ? { ':state': query.state } : {}),
          },
          ...(query.state ? { ExpressionAttributeNames: { '#state': 'state' } } : {}),
          FilterExpression: filters.length > 0 ? filters.join(' AND ') : undefined,
          ScanIndexForward: false,
          Limit: Math.min(budget, filtered ? 100 : query.limit - items.length),
          ExclusiveStartKey: startKey,
        }),
      );
      budget -= page.ScannedCount ?? 0;
      for (const item of page.Items ?? []) {
        // More matches than fit: resume right after the last one returned.
        if (items.length === query.limit) return { items, next: items[items.length - 1].id };
        items.push(downloadFromItem(item));
      }
      if (!page.LastEvaluatedKey) return { items };
      startKey = page.LastEvaluatedKey as typeof startKey;
    }
    // Resume after the last item returned, or, when the budget ran out first, after the last item read.
    const next = items.length === query.limit ? items[items.length - 1].id : (startKey!.GSI1SK as string);
    return { items, next };
  }

  private async listByHashPrefix(prefix: string, query: ListQuery): Promise<ListPage> {
    const memberships = await queryAll(
      this.documents,
      {
        TableName: this.table,
        IndexName: PREFIX_INDEX,
        KeyConditionExpression: 'GSI2PK = :shard AND begins_with(GSI2SK, :prefix)',
        ExpressionAttributeValues: { ':shard': prefixShard(prefix), ':prefix': prefix },
      },
      PREFIX_SEARCH_CAP,
    );
    const ids = [...new Set(memberships.map((m) => m.download_id as string))]
      .filter((id) => !query.after || id < query.after)
      .sort()
      .reverse();
    if (query.state) {
      // The prefix search is capped (PREFIX_SEARCH_CAP), so reading its matches whole to filter by state is bounded.
      const matching = (await this.getMany(ids)).filter((d) => d.state === query.state);
      const page = matching.slice(0, query.limit);
      return { items: page, next: matching.length > query.limit ? page[page.length - 1].id : undefined };
    }
    const page = ids.slice(0, query.limit);
    return { items: await this.getMany(page), next: ids.length > query.limit ? page[page.length - 1] : undefined };
  }

  /** Downloads by id, in the order given (BatchGet answers in any order, 100 keys a call). */
  private async getMany(ids: string[]): Promise<Download[]> {
    const items = await batchGetAll(this.documents, this.table, ids.map(downloadKey));
    const found = new Map(items.map((item) => [item.id as string, downloadFromItem(item)]));
    return ids.flatMap((id) => (found.has(id) ? [found.get(id)!] : []));
  }

  private async mustGet(id: string): Promise<Download> {
    const current = await this.get(id);
    if (!current) throw new DownloadNotFoundError(id);
    return current;
  }

  private put(
    Item: Record<string, unknown>,
    ConditionExpression?: string,
    values?: Record<string, unknown>,
  ): TransactItem {
    return { Put: { TableName: this.table, Item, ConditionExpression, ExpressionAttributeValues: values } };
  }

  /** The guard of `infohash` for `id`: passes when free or already `id`'s (a stuck download being retried). */
  private holdGuard(infohash: string, id: string, at: string): TransactItem {
    return this.put(guardItem(infohash, id, at), 'attribute_not_exists(PK) OR download_id = :self', { ':self': id });
  }

  /** Rewrites the download if nobody else wrote it since `revision` was read. */
  private casUpdate(next: Download, revision: number): TransactItem {
    return this.put(downloadToItem(next), 'revision = :rev', { ':rev': revision });
  }
}

class OwnerNotActive extends Error {}

/** The guards whose condition failed, with their holder, in transaction (= hash) order. */
function guardOwners(err: unknown): Array<{ infohash: string; ownerId: string }> {
  if (!(err instanceof TransactionCancelledError)) return [];
  return err.reasons.flatMap(({ code, item }) =>
    code === 'ConditionalCheckFailed' && item?.entity === 'guard'
      ? [{ infohash: item.infohash as string, ownerId: item.download_id as string }]
      : [],
  );
}

/** A guard's refusal as `Refusal`, naming the first holder; any other failure unchanged. */
function guardRefusal(err: unknown, Refusal: new (infohash: string, ownerId: string) => Error): unknown {
  const owner = guardOwners(err)[0];
  return owner ? new Refusal(owner.infohash, owner.ownerId) : err;
}

/** The download id of a legacy-id item that refused the import: that row was imported before. */
function alreadyImported(err: unknown): string | undefined {
  if (!(err instanceof TransactionCancelledError)) return undefined;
  const [first] = err.reasons;
  return first?.code === 'ConditionalCheckFailed' && first.item?.entity === 'legacy-id'
    ? (first.item.download_id as string)
    : undefined;
}

/** Runs `work` on every item, at most `limit` at once. */
async function eachLimited<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
