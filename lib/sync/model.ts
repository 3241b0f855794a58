/**
 * Hourly sync (lib/sync/README.md). An attempt walks the mandatory sections of one
 * user's brokerage connection; each section is a step with a durable row.
 * The outcome is DERIVED from those rows, never reported by anyone.
 */

export const ACCESS_SECTION = 'access.local';
export const MANDATORY_SECTIONS = ['portfolio', 'operations', 'events.refresh', 'catalog.enrichment'] as const;
export type Section = (typeof MANDATORY_SECTIONS)[number];

/**
 * What a section reads that another section writes: a dependent section is the
 * attempt's second phase, dispatched only once every section it depends on has
 * succeeded (the catalog enriches the instruments portfolio and operations
 * found). Every other section is dispatched by the walk.
 */
export const SECTION_DEPENDS_ON: Readonly<Partial<Record<Section, readonly Section[]>>> = {
  'catalog.enrichment': ['portfolio', 'operations'],
};
export const FIRST_PHASE: readonly Section[] = MANDATORY_SECTIONS.filter((s) => !SECTION_DEPENDS_ON[s]);

export function isSection(value: unknown): value is Section {
  return typeof value === 'string' && (MANDATORY_SECTIONS as readonly string[]).includes(value);
}

export type AttemptState = 'running' | 'succeeded' | 'partial' | 'failed';
export type StepState = 'running' | 'succeeded' | 'failed';

/** Every code an attempt or a step can carry; precedence of attempt codes is in outcome.ts. */
export const SyncErrorCode = {
  INTERRUPTED: 'INTERRUPTED',
  DEADLINE: 'DEADLINE',
  DISPATCH_FAILED: 'DISPATCH_FAILED',
  ACCESS_DENIED: 'ACCESS_DENIED',
  UNAUTHORIZED: 'UNAUTHORIZED',
  UPSTREAM_ERROR: 'UPSTREAM_ERROR',
  /** T-Bank: 40003 token missing, invalid or expired; 40002 not enough rights. */
  TOKEN_INVALID: 'TOKEN_INVALID',
  INSUFFICIENT_RIGHTS: 'INSUFFICIENT_RIGHTS',
  /** 80002 / 429 past the step's bound of waits. */
  RATE_LIMITED: 'RATE_LIMITED',
  /** An answer broke the contract: not JSON, truncated, an unknown enum, money out of range, an unsafe id. */
  BAD_UPSTREAM_ANSWER: 'BAD_UPSTREAM_ANSWER',
  /** 12002: T-Bank retired a method the sync calls (a release must move to its successor). */
  METHOD_RETIRED: 'METHOD_RETIRED',
  /** A 30xxx or other 4xx: the request itself was refused. */
  UPSTREAM_REJECTED: 'UPSTREAM_REJECTED',
  STEP_TIMEOUT: 'STEP_TIMEOUT',
  /** A second-phase section that could not start: a section it depends on did not succeed. */
  DEPENDENCY_FAILED: 'DEPENDENCY_FAILED',
  INTERNAL: 'INTERNAL',
} as const;
export type SyncErrorCode = (typeof SyncErrorCode)[keyof typeof SyncErrorCode];

export const HOUR_MS = 60 * 60 * 1000;

/** The user's hourly head: the durable fence. Its attempt_id is the fencing token. */
export interface HourlyHead {
  user_id: string;
  attempt_id: string;
  state: AttemptState;
  /** Epoch ms. */
  started_at: number;
  finished_at?: number;
  /** The invocation walking the attempt and its hard end (its Lambda timeout). */
  run_id: string;
  run_deadline: number;
  walk_completed: boolean;
  /** Step ids written right after each dispatch: section → step id. */
  children: Partial<Record<Section, string>>;
  error_code?: string;
  sections?: Partial<Record<Section, SectionResult>>;
  revision: number;
  /**
   * Epoch ms: the instant the tick must next look at this user (the due index,
   * lib/sync/README.md). Absent only on a head written before the index existed.
   */
  due_at?: number;
  /**
   * Epoch ms: the connection was given a new token after this attempt started (PUT again). The
   * attempt after it is due at once, whatever the hour: the new token is tried at the next tick.
   */
  rekeyed_at?: number;
}

/** Times in the model are epoch ms (lib/clock); items store them as ISO-8601 UTC (keys.ts). */
export interface StepRow {
  attempt_id: string;
  step_id: string;
  section: Section;
  state: StepState;
  error_code?: string;
  /** x-tracking-id of the T-Bank call that failed the step (support asks for it). */
  tracking_id?: string;
  started_at: number;
  finished_at?: number;
  /** Enum values T-Bank sent that this release does not know, kept raw: how many, and the distinct `field=value`s (at most 10). */
  unknown_values?: number;
  unknown_names?: string[];
  /** Accounts the section did not read, and why (at most 50). */
  skipped_accounts?: SkippedAccount[];
  /**
   * A section that continues across steps (decision 326): how many steps handed it over, and where
   * the next one resumes (account id → the first month it has not synced yet, YYYY-MM).
   */
  continuations?: number;
  resume?: Record<string, string>;
  /** Handed over, its continuation not started yet: the one delivery that finds it set takes the row. */
  awaiting_start?: boolean;
}

/**
 * An account a section skipped: `no-access` (ACCOUNT_ACCESS_LEVEL_NO_ACCESS), `not-brokerage` (a debit,
 * savings or invest-box account, or a type this release does not know), `forbidden` (40002 on it),
 * `not-found` (50004 on it).
 */
export interface SkippedAccount {
  account_id: string;
  reason: 'no-access' | 'not-brokerage' | 'forbidden' | 'not-found';
}

/** What a step adds to its finished row besides its state and code. */
export type StepReport = Pick<StepRow, 'unknown_values' | 'unknown_names' | 'skipped_accounts'>;

export interface SectionResult {
  state: StepState | 'missing' | 'expired';
  step_id?: string;
  error_code?: string;
}

export interface Connection {
  user_id: string;
  created_at: string;
}

/** One window of the token's call budget (the console): calls taken of one T-Bank service. */
export interface RateUse {
  service: string;
  window_start: number;
  calls: number;
}
