import { StaleAttemptError } from '../../../lib/sync/errors';
import { dueShardOf } from '../../../lib/sync/keys';
import type { Connection, HourlyHead, Section, StepReport, StepRow, StepState } from '../../../lib/sync/model';
import type { ConnectionStore, HourlyStore } from '../../../lib/sync/store';

/**
 * The sync store in memory, for unit tests of the services: the same
 * conditions as the DynamoDB store, applied atomically (one JS turn). Every
 * call is counted by name, so a test can say what a visit costs.
 */
export class MemorySyncStore implements HourlyStore, ConnectionStore {
  readonly heads = new Map<string, HourlyHead>();
  readonly records = new Map<string, HourlyHead>();
  readonly rows = new Map<string, StepRow>();
  readonly conns = new Map<string, { sealed: string; created_at: number; due_at?: number }>();
  readonly calls: Record<string, number> = {};

  private count(name: string) {
    this.calls[name] = (this.calls[name] ?? 0) + 1;
  }
  private copy<T>(v: T): T {
    return structuredClone(v);
  }

  async head(user: string) {
    this.count('head');
    const head = this.heads.get(user);
    return head && this.copy(head);
  }
  async attemptRecord(attemptId: string) {
    this.count('attemptRecord');
    const record = this.records.get(attemptId);
    return record && this.copy(record);
  }
  async attempts(user: string, limit: number) {
    return [...this.records.values()]
      .filter((r) => r.user_id === user)
      .sort((a, b) => b.started_at - a.started_at)
      .slice(0, limit)
      .map((r) => this.copy(r));
  }
  async headsOf(users: string[]) {
    return users.flatMap((u) => (this.heads.has(u) ? [this.copy(this.heads.get(u)!)] : []));
  }
  async stepRows(attemptId: string) {
    this.count('stepRows');
    return [...this.rows.values()].filter((r) => r.attempt_id === attemptId).map((r) => this.copy(r));
  }
  async putFirstHead(head: HourlyHead) {
    this.count('putFirstHead');
    const conn = this.conns.get(head.user_id);
    if (this.heads.has(head.user_id) || !conn) return false;
    this.heads.set(head.user_id, this.copy(head));
    this.records.set(head.attempt_id, this.copy(head));
    delete conn.due_at;
    return true;
  }
  async replaceHead(
    expected: HourlyHead,
    next: HourlyHead,
    opts: { whileRunning: boolean; records: HourlyHead[]; rows?: StepRow[] },
  ) {
    this.count('replaceHead');
    const current = this.heads.get(expected.user_id);
    if (!current || current.attempt_id !== expected.attempt_id || current.revision !== expected.revision) return false;
    if (opts.whileRunning && current.state !== 'running') return false;
    for (const section of Object.keys(expected.children)) {
      const seen = opts.rows?.find((r) => r.section === section);
      const now = this.rows.get(`${expected.attempt_id}|${section}`);
      if (opts.rows && (seen ? now?.state !== seen.state : now !== undefined)) return false;
    }
    this.heads.set(next.user_id, this.copy(next));
    for (const record of opts.records) this.records.set(record.attempt_id, this.copy(record));
    return true;
  }
  async updateRunningHead(
    user: string,
    attemptId: string,
    change: { dispatched?: { section: Section; stepId: string }; walkCompleted?: true; dueAt?: number },
  ) {
    this.count('updateRunningHead');
    const head = this.heads.get(user);
    if (!head || head.attempt_id !== attemptId || head.state !== 'running') throw new StaleAttemptError(attemptId);
    if (change.dispatched) head.children[change.dispatched.section] = change.dispatched.stepId;
    if (change.walkCompleted) head.walk_completed = true;
    if (change.dueAt !== undefined) head.due_at = change.dueAt;
    head.revision++;
  }
  async claimDispatch(user: string, attemptId: string, section: Section, stepId: string) {
    this.count('claimDispatch');
    const head = this.heads.get(user);
    if (!head || head.attempt_id !== attemptId || head.state !== 'running' || !head.walk_completed) return false;
    if (head.children[section]) return false;
    head.children[section] = stepId;
    head.revision++;
    return true;
  }
  async deferHead(user: string, revision: number, dueAt: number) {
    this.count('deferHead');
    const head = this.heads.get(user);
    if (!head || head.revision !== revision) return false;
    head.due_at = dueAt;
    return true;
  }
  async startStep(user: string, row: StepRow) {
    this.count('startStep');
    if (this.heads.get(user)?.attempt_id !== row.attempt_id) throw new StaleAttemptError(row.attempt_id);
    const key = `${row.attempt_id}|${row.section}`;
    const stored = this.rows.get(key);
    if (stored?.step_id === row.step_id && stored.state === 'running' && stored.awaiting_start) {
      delete stored.awaiting_start;
      stored.started_at = row.started_at;
      return 'continued' as const;
    }
    if (stored) return 'exists' as const;
    this.rows.set(key, this.copy(row));
    return 'started' as const;
  }
  async continueStep(
    user: string,
    row: Pick<StepRow, 'attempt_id' | 'section' | 'step_id'>,
    next: { step_id: string; resume: Record<string, string> },
  ) {
    this.count('continueStep');
    const head = this.heads.get(user);
    const stored = this.rows.get(`${row.attempt_id}|${row.section}`);
    if (
      head?.attempt_id !== row.attempt_id ||
      head.state !== 'running' ||
      head.children[row.section] !== row.step_id ||
      stored?.step_id !== row.step_id ||
      stored.state !== 'running'
    )
      throw new StaleAttemptError(row.attempt_id);
    head.children[row.section] = next.step_id;
    head.revision++;
    Object.assign(stored, {
      step_id: next.step_id,
      resume: { ...next.resume },
      awaiting_start: true,
      continuations: (stored.continuations ?? 0) + 1,
    });
  }
  async finishStep(
    user: string,
    row: Pick<StepRow, 'attempt_id' | 'section' | 'step_id'>,
    finish: {
      state: Exclude<StepState, 'running'>;
      finished_at: number;
      error_code?: string;
      tracking_id?: string;
    } & StepReport,
  ) {
    this.count('finishStep');
    if (this.heads.get(user)?.attempt_id !== row.attempt_id) throw new StaleAttemptError(row.attempt_id);
    const stored = this.rows.get(`${row.attempt_id}|${row.section}`);
    if (!stored || stored.step_id !== row.step_id || stored.state !== 'running') throw new Error('condition failed');
    Object.assign(stored, finish);
  }
  async *dueEntries(shard: number, now: number, limit?: number) {
    this.count('dueEntries');
    const due = [
      ...[...this.heads.values()].map((h) => [h.user_id, h.due_at, false] as const),
      ...[...this.conns.entries()].map(([user, c]) => [user, c.due_at, true] as const),
    ]
      .filter(([user, at]) => at !== undefined && at <= now && dueShardOf(user) === shard)
      .sort((a, b) => a[1]! - b[1]! || (a[0] < b[0] ? -1 : 1))
      .map(([user_id, due_at, fresh]) => ({ user_id, due_at: due_at!, fresh }));
    yield* limit ? due.slice(0, limit) : due;
  }
  async putConnectionIfNoHead(user: string, sealed: string, createdAt: number, dueAt: number) {
    this.count('putConnectionIfNoHead');
    if (this.heads.has(user)) return false;
    this.conns.set(user, { sealed, created_at: createdAt, due_at: dueAt });
    return true;
  }
  async putConnectionIfHead(user: string, sealed: string, createdAt: number, now: number) {
    this.count('putConnectionIfHead');
    const head = this.heads.get(user);
    if (!head) return false;
    this.conns.set(user, { sealed, created_at: createdAt });
    Object.assign(head, { rekeyed_at: now, due_at: now, revision: head.revision + 1 });
    return true;
  }
  async connectionDueAt(user: string) {
    return this.conns.get(user)?.due_at;
  }
  async freshDueCount(shard: number, upTo: number) {
    return [...this.conns.entries()].filter(
      ([user, c]) => c.due_at !== undefined && c.due_at <= upTo && dueShardOf(user) === shard,
    ).length;
  }
  async sealedToken(user: string) {
    this.count('sealedToken');
    return this.conns.get(user)?.sealed;
  }
  async replaceSealedToken(user: string, old: string, next: string) {
    this.count('replaceSealedToken');
    const conn = this.conns.get(user);
    if (conn?.sealed !== old) return false;
    conn.sealed = next;
    return true;
  }
  async removeConnection(user: string) {
    this.count('removeConnection');
    if (!this.conns.has(user)) return false;
    this.conns.delete(user);
    this.heads.delete(user);
    return true;
  }
  async markConnectionDue(user: string, dueAt: number) {
    this.count('markConnectionDue');
    const conn = this.conns.get(user);
    if (!conn || this.heads.has(user)) return false;
    conn.due_at = dueAt;
    return true;
  }
  async connectionPage(limit: number, after?: string) {
    const users = [...this.conns.keys()].sort().filter((u) => !after || u > after);
    const items = users
      .slice(0, limit)
      .map((u) => ({ user_id: u, created_at: new Date(this.conns.get(u)!.created_at).toISOString() }));
    return { items, next: users.length > limit ? items[items.length - 1].user_id : undefined };
  }
  async sealedTokenPage(limit: number, after?: string) {
    this.count('sealedTokenPage');
    const users = [...this.conns.keys()].sort().filter((u) => !after || u > after);
    const items = users.slice(0, limit).map((u) => ({ user_id: u, sealed: this.conns.get(u)!.sealed }));
    return { items, next: users.length > limit ? items[items.length - 1].user_id : undefined };
  }
  async *connections(): AsyncGenerator<Connection> {
    this.count('connections');
    for (const [user, c] of this.conns) yield { user_id: user, created_at: new Date(c.created_at).toISOString() };
  }
}
