import type { Connection, HourlyHead, Section, StepReport, StepRow, StepState } from './model';

/**
 * The hourly coordinator's durable state. Every write is ONE conditional
 * write or transaction whose name says the condition it enforces; which
 * write to make (the branch, the outcome) is the service's (service.ts).
 * The head is the fence: its `attempt_id` is the fencing token, its
 * `revision` the compare-and-swap.
 */
export interface HourlyStore {
  head(user: string): Promise<HourlyHead | undefined>;
  attemptRecord(attemptId: string): Promise<HourlyHead | undefined>;
  stepRows(attemptId: string): Promise<StepRow[]>;

  /**
   * The first head of a user, with its attempt record: only if no head exists AND the connection
   * does (a removed connection is not resurrected); removes the connection's own due entry in the
   * same transaction. false when either condition failed.
   */
  putFirstHead(head: HourlyHead): Promise<boolean>;

  /**
   * Replaces the head read as `expected` (same attempt_id and revision, and still `running` when
   * `whileRunning`) by `next`, in ONE transaction with the attempt `records` and, when `rows` is
   * given, a pin of every dispatched step row of `expected` at the state read (a row that changed
   * cancels). false when any condition failed.
   */
  replaceHead(
    expected: HourlyHead,
    next: HourlyHead,
    opts: { whileRunning: boolean; records: HourlyHead[]; rows?: StepRow[] },
  ): Promise<boolean>;

  /** Changes the running attempt `attemptId` of `user` (bumps its revision); StaleAttemptError once it is not. */
  updateRunningHead(
    user: string,
    attemptId: string,
    change: { dispatched?: { section: Section; stepId: string }; walkCompleted?: true; dueAt?: number },
  ): Promise<void>;

  /**
   * Records a second-phase step id on the walked, running attempt `attemptId`, only while its
   * section has none: the one caller that gets true dispatches it (racing finishers, a tick's
   * re-try). false when the section is taken or the attempt is no longer running.
   */
  claimDispatch(user: string, attemptId: string, section: Section, stepId: string): Promise<boolean>;

  /** Moves the due entry of the head read at `revision`; false when the head moved on meanwhile. */
  deferHead(user: string, revision: number, dueAt: number): Promise<boolean>;

  /**
   * The step's `running` row, fenced on the head's attempt_id: StaleAttemptError once a successor exists;
   * 'exists' on a re-delivery. 'continued': the row was handed over to this step (`continueStep`), and
   * this is its first delivery.
   */
  startStep(user: string, row: StepRow): Promise<'started' | 'continued' | 'exists'>;

  /**
   * Hands a running step's section over to a continuation step `next`, in ONE transaction fenced
   * like a finish: the running head's child for the section moves from the step to `next` and the
   * row (still `running`) takes `next`'s id, the `resume` point, `awaiting_start`, one more
   * continuation. StaleAttemptError when the attempt or the row moved on.
   */
  continueStep(
    user: string,
    row: Pick<StepRow, 'attempt_id' | 'section' | 'step_id'>,
    next: { step_id: string; resume: Record<string, string> },
  ): Promise<void>;

  /** The step's finish, only from `running` and fenced like its start (StaleAttemptError). */
  finishStep(
    user: string,
    row: Pick<StepRow, 'attempt_id' | 'section' | 'step_id'>,
    finish: {
      state: Exclude<StepState, 'running'>;
      finished_at: number;
      error_code?: string;
      tracking_id?: string;
    } & StepReport,
  ): Promise<void>;

  /** The user's attempt records, newest first, at most `limit` (the console; eventually consistent). */
  attempts(user: string, limit: number): Promise<HourlyHead[]>;
  /** The heads of these users (absent: none yet), in no particular order. */
  headsOf(users: string[]): Promise<HourlyHead[]>;

  /** The users of one due shard whose entry is due at or before `now`, oldest first; at most `limit` when given. */
  dueEntries(shard: number, now: number, limit?: number): AsyncGenerator<DueEntry>;
}

/** Connections and their sealed tokens (opaque here: sealing is the service's). */
export interface ConnectionStore {
  /** Creates or re-keys the connection WITH a due entry, only while the user has no head; false otherwise. */
  putConnectionIfNoHead(user: string, sealed: string, createdAt: number, dueAt: number): Promise<boolean>;
  /**
   * Creates or re-keys the connection WITHOUT a due entry (the head carries it), only while a head
   * exists, and in the same transaction marks the head re-keyed at `now` and due then (its revision
   * moves: a reservation racing it is refused and reads again).
   */
  putConnectionIfHead(user: string, sealed: string, createdAt: number, now: number): Promise<boolean>;
  sealedToken(user: string): Promise<string | undefined>;
  /** When a connection without a head is due (its first sync); undefined once a head carries its entry, or with no connection. */
  connectionDueAt(user: string): Promise<number | undefined>;
  /** How many connections without a head are due in `shard` at or before `upTo` (the first syncs' queue; reads the index only). */
  freshDueCount(shard: number, upTo: number): Promise<number>;
  /** Swaps the sealed token only if it is still `old` (a newer one is never overwritten). */
  replaceSealedToken(user: string, old: string, next: string): Promise<boolean>;
  /** Deletes the connection and the head (so its due entry) in ONE transaction; false when there was none. */
  removeConnection(user: string): Promise<boolean>;
  /** One page of connections by user id, after `after` (the console). */
  connectionPage(limit: number, after?: string): Promise<{ items: Connection[]; next?: string }>;
  /** One page of sealed tokens by user id, after `after` (the reseal); never the tick's path. */
  sealedTokenPage(limit: number, after?: string): Promise<{ items: SealedToken[]; next?: string }>;
  /** Every connection (the backfill of the due index); never the tick's path. */
  connections(): AsyncGenerator<Connection>;
  /** Gives a connection without a head (written before the due index existed) its due entry; false once a head exists. */
  markConnectionDue(user: string, dueAt: number): Promise<boolean>;
}

/** A connection's stored token, as sealed. */
export interface SealedToken {
  user_id: string;
  sealed: string;
}

/** An entry of the due index: the user and the instant it is due (epoch ms), in due order within a shard. */
export interface DueEntry {
  user_id: string;
  due_at: number;
  /** Due through its connection item: never attempted, so its next attempt is a first sync. */
  fresh: boolean;
}
