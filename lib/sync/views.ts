import { isoTime } from '../clock';
import type { FirstSyncQueue } from './connections';
import { HourlyHead, Section, SectionResult, StepRow, SyncErrorCode } from './model';
import type { Operation } from './tbank/contract';
import { STEP_CODE } from './tbank/errors';

/** The read API's shapes: times as ISO strings, no fencing internals (run ids, revisions). */

const iso = (ms?: number) => (ms === undefined ? undefined : isoTime(ms));

/**
 * The vocabulary of `GET /sync/{user}/hourly` (docs/sync.md, "What the hourly read shows"; decision 317): its
 * attempt states, its sections' states, the two lifecycle codes the design names as an attempt's first problem
 * (INTERRUPTED, DEADLINE) and the codes a step row carries. What the design does not name (DISPATCH_FAILED;
 * section states `missing`, `expired`) does not leak through it: each reads as the word that says the same to a
 * reader; the attempt read (`GET /sync/attempts/{attempt}`) and the logs keep them.
 */
export const HOURLY_STATES = ['running', 'succeeded', 'partial', 'failed'] as const;
export const HOURLY_SECTION_STATES = ['succeeded', 'failed'] as const;
export const HOURLY_ERROR_CODES = [
  SyncErrorCode.INTERRUPTED,
  SyncErrorCode.DEADLINE,
  SyncErrorCode.ACCESS_DENIED,
  SyncErrorCode.UNAUTHORIZED,
  SyncErrorCode.UPSTREAM_ERROR,
  SyncErrorCode.TOKEN_INVALID,
  SyncErrorCode.INSUFFICIENT_RIGHTS,
  SyncErrorCode.RATE_LIMITED,
  SyncErrorCode.BAD_UPSTREAM_ANSWER,
  SyncErrorCode.METHOD_RETIRED,
  SyncErrorCode.UPSTREAM_REJECTED,
  STEP_CODE['not-found'],
  SyncErrorCode.STEP_TIMEOUT,
  SyncErrorCode.DEPENDENCY_FAILED,
  SyncErrorCode.INTERNAL,
] as const;

/** Lifecycle code the design does not name → the read's word: a lost dispatch is our own failure. */
const LIFECYCLE_AS: Record<string, string> = { [SyncErrorCode.DISPATCH_FAILED]: SyncErrorCode.INTERNAL };

/** Any code as the read shows it: its own when in the vocabulary, its mapping, else INTERNAL (never a new word). */
function hourlyCode(code: string | undefined): string | null {
  if (code === undefined) return null;
  if ((HOURLY_ERROR_CODES as readonly string[]).includes(code)) return code;
  return LIFECYCLE_AS[code] ?? SyncErrorCode.INTERNAL;
}

/** A settled section: `expired` is a step whose wait ran out (the design's DEADLINE), `missing` one that never ran; both failed. */
function hourlySection(result: SectionResult) {
  const { state, step_id, error_code } = result;
  if (state === 'succeeded') return { state, ...(step_id ? { step_id } : {}) };
  const code = state === 'expired' ? SyncErrorCode.DEADLINE : state === 'missing' ? SyncErrorCode.INTERNAL : error_code;
  return {
    state: 'failed' as const,
    ...(step_id ? { step_id } : {}),
    error_code: hourlyCode(code ?? SyncErrorCode.INTERNAL),
  };
}

export function hourlyView(head: HourlyHead) {
  const state = (HOURLY_STATES as readonly string[]).includes(head.state) ? head.state : 'failed';
  const sections = head.sections
    ? Object.fromEntries(
        Object.entries(head.sections).map(([section, result]) => [section as Section, hourlySection(result!)]),
      )
    : null;
  return {
    state,
    meta: {
      attempt_id: head.attempt_id,
      started_at: iso(head.started_at),
      finished_at: iso(head.finished_at),
      error_code: hourlyCode(head.error_code),
      sections,
    },
  };
}

/**
 * A connection with no attempt yet, waiting for its first sync: the read's shape (`state`, `meta`,
 * every attempt field null) with `state: queued` and where it stands (decision 365).
 */
export function queuedView(queue: FirstSyncQueue) {
  return {
    state: 'queued' as const,
    meta: { attempt_id: null, started_at: null, finished_at: null, error_code: null, sections: null },
    queue: { reason: 'first_sync' as const, position: queue.position, expected_at: isoTime(queue.expected_at) },
  };
}

export function attemptView(attempt: HourlyHead & { rows: StepRow[] }) {
  return {
    attempt_id: attempt.attempt_id,
    user_id: attempt.user_id,
    state: attempt.state,
    started_at: iso(attempt.started_at),
    finished_at: iso(attempt.finished_at),
    error_code: attempt.error_code ?? null,
    sections: Object.entries(attempt.children).map(([section, stepId]) => {
      const row = attempt.rows.find((r) => r.section === section && r.step_id === stepId);
      return {
        section,
        step_id: stepId,
        step: row
          ? {
              state: row.state,
              error_code: row.error_code ?? null,
              tracking_id: row.tracking_id ?? null,
              started_at: iso(row.started_at),
              finished_at: iso(row.finished_at),
              unknown_values: row.unknown_values ?? 0,
              unknown_names: row.unknown_names ?? [],
              skipped_accounts: row.skipped_accounts ?? [],
              // How many earlier steps handed the section over to this one (decision 326).
              continuations: row.continuations ?? 0,
            }
          : null,
      };
    }),
  };
}

/** Operations as stored: money as {currency, value: "<decimal string>"}, never a float. */
export function operationsView(operations: Operation[]) {
  return { items: operations };
}
