import { ulid } from 'ulid';
import { idTime, isId } from '../ident';
import {
  HourlyHead,
  MANDATORY_SECTIONS,
  Section,
  SECTION_DEPENDS_ON,
  SectionResult,
  StepRow,
  SyncErrorCode,
} from './model';

/**
 * The derived outcome of an attempt: a pure function of its durable rows.
 *  - succeeded: EVERY mandatory step succeeded AND the walk completed AND no cause;
 *  - partial:   some succeeded (a cause such as INTERRUPTED caps here);
 *  - failed:    none succeeded.
 * Its error code is the first problem by precedence: the attempt's cause
 * (INTERRUPTED, ACCESS_DENIED), then each section's code in section order,
 * where DEADLINE is the code of a step whose wait expired: still running when
 * the attempt settled (a step-level code: it never hides an earlier section's
 * cause). A step that finished after its wait bound but before anyone settled
 * the attempt keeps its own result: the design's rule is that a late
 * publication of the current attempt's step holds until the outcome is fixed
 * (decision 363, which replaces 318's "late is expired"). A second-phase section never
 * dispatched because a section it depends on did not succeed is `failed`
 * with DEPENDENCY_FAILED: it did nothing, so it cannot count as a success.
 */

export interface Derived {
  state: 'succeeded' | 'partial' | 'failed';
  error_code?: string;
  sections: Record<Section, SectionResult>;
}

export interface DeriveInput {
  head: Pick<HourlyHead, 'walk_completed' | 'children' | 'started_at'>;
  rows: StepRow[];
  cause?: typeof SyncErrorCode.INTERRUPTED | typeof SyncErrorCode.ACCESS_DENIED;
}

export function deriveOutcome({ head, rows, cause }: DeriveInput): Derived {
  const sections = {} as Record<Section, SectionResult>;
  const problems: string[] = [];
  if (cause) problems.push(cause);
  if (!head.walk_completed && !cause) problems.push(SyncErrorCode.INTERRUPTED);

  for (const section of MANDATORY_SECTIONS) {
    const stepId = head.children[section];
    const row = rowOf(head, rows, section);
    const needs = SECTION_DEPENDS_ON[section];
    if (!stepId && needs?.some((dep) => sections[dep].state !== 'succeeded')) {
      sections[section] = { state: 'failed', error_code: SyncErrorCode.DEPENDENCY_FAILED };
      problems.push(SyncErrorCode.DEPENDENCY_FAILED);
    } else if (!row) {
      // Dispatched (or meant to be) but no durable row: a problem record, never a success.
      sections[section] = { state: 'missing', step_id: stepId };
      problems.push(SyncErrorCode.DISPATCH_FAILED);
    } else if (row.state === 'running') {
      // Settled while still running: its wait is over (the barrier) or the run died.
      sections[section] = { state: 'expired', step_id: row.step_id };
      problems.push(SyncErrorCode.DEADLINE);
    } else {
      sections[section] = { state: row.state, step_id: row.step_id, error_code: row.error_code };
      if (row.state === 'failed') problems.push(row.error_code ?? SyncErrorCode.INTERNAL);
    }
  }

  const succeeded = MANDATORY_SECTIONS.filter((s) => sections[s].state === 'succeeded').length;
  const clean = succeeded === MANDATORY_SECTIONS.length && problems.length === 0;
  const state = clean ? 'succeeded' : succeeded > 0 ? 'partial' : 'failed';
  return { state, error_code: firstByPrecedence(problems), sections };
}

/** Attempt-level causes outrank the sections' codes; DEADLINE is a section's code like any other. */
const PRECEDENCE: string[] = [SyncErrorCode.INTERRUPTED];

function firstByPrecedence(problems: string[]): string | undefined {
  for (const code of PRECEDENCE) if (problems.includes(code)) return code;
  return problems[0];
}

/**
 * A step's id: a ULID of exactly `now`, minted right before the step's
 * dispatch (tick.ts, service.ts `dispatchReady`), so the id carries the
 * dispatch instant. Not the process's monotonic factory: that one keeps the
 * latest time it has seen, and the instant must be the dispatch's own.
 */
export const newStepId = (now: number): string => ulid(now).toLowerCase();

/** When a step was dispatched (its id's time; `orElse` for an id that is not ours, read tolerantly). */
export const dispatchedAt = (stepId: string, orElse: number): number => (isId(stepId) ? idTime(stepId) : orElse);

/**
 * The instant a section's wait is over, measured per step from its own
 * dispatch (`waitBoundMs` after it). A second-phase section not yet
 * dispatched whose dependencies all succeeded may still be sent until
 * `waitBoundMs` after the last of them finished; undefined while a
 * dependency is still out (its own bound comes first), and -Infinity when
 * nothing more can come (a failed dependency, a first-phase dispatch that failed).
 */
export function waitEnd(
  head: Pick<HourlyHead, 'walk_completed' | 'children' | 'started_at'>,
  rows: StepRow[],
  section: Section,
  waitBoundMs: number,
): number | undefined {
  const stepId = head.children[section];
  if (stepId) {
    const row = rowOf(head, rows, section);
    if (row && row.state !== 'running') return -Infinity;
    return dispatchedAt(stepId, head.started_at) + waitBoundMs;
  }
  const needs = SECTION_DEPENDS_ON[section];
  if (!needs) return -Infinity; // the walk did not dispatch it: nothing will
  let lastFinish = -Infinity;
  for (const dep of needs) {
    const row = rowOf(head, rows, dep);
    if (!head.children[dep] || (row && row.state === 'failed')) return -Infinity;
    if (!row || row.state === 'running') return undefined;
    lastFinish = Math.max(lastFinish, row.finished_at ?? -Infinity);
  }
  return lastFinish + waitBoundMs;
}

/**
 * The terminal barrier: every mandatory section finished, or its own wait
 * (waitEnd) is over. Until then settling would judge too early.
 */
export function barrierReached(
  head: Pick<HourlyHead, 'walk_completed' | 'children' | 'started_at'>,
  rows: StepRow[],
  now: number,
  waitBoundMs: number,
): boolean {
  if (!head.walk_completed) return false;
  return MANDATORY_SECTIONS.every((section) => {
    // A dependency still out keeps the dependent open; the dependency's own bound ends that.
    const end = waitEnd(head, rows, section, waitBoundMs);
    if (end === undefined) {
      const needs = SECTION_DEPENDS_ON[section] ?? [];
      return needs.every((dep) => (waitEnd(head, rows, dep, waitBoundMs) ?? Infinity) <= now);
    }
    return now >= end;
  });
}

/**
 * The second-phase sections not yet dispatched whose every dependency has
 * succeeded and whose own dispatch window (waitEnd) is still open at `now`.
 */
export function readyToDispatch(
  head: Pick<HourlyHead, 'walk_completed' | 'children' | 'started_at'>,
  rows: StepRow[],
  now = -Infinity,
  waitBoundMs = Infinity,
): Section[] {
  if (!head.walk_completed) return [];
  return MANDATORY_SECTIONS.filter((section) => {
    const needs = SECTION_DEPENDS_ON[section];
    return (
      !!needs &&
      !head.children[section] &&
      needs.every((dep) => rowOf(head, rows, dep)?.state === 'succeeded') &&
      now < (waitEnd(head, rows, section, waitBoundMs) ?? Infinity)
    );
  });
}

/** The earliest wait bound still ahead of `now` among the dispatched steps (the due index's next look). */
export function nextWaitEnd(
  head: Pick<HourlyHead, 'started_at'> & Partial<Pick<HourlyHead, 'children'>>,
  now: number,
  waitBoundMs: number,
): number | undefined {
  const ends = Object.values(head.children ?? {})
    .filter((id): id is string => !!id)
    .map((id) => dispatchedAt(id, head.started_at) + waitBoundMs)
    .filter((end) => end > now);
  return ends.length ? Math.min(...ends) : undefined;
}

function rowOf(head: Pick<HourlyHead, 'children'>, rows: StepRow[], section: Section): StepRow | undefined {
  return rows.find((r) => r.section === section && r.step_id === head.children[section]);
}

/**
 * Every dispatched step has a finished row, the last finished before `before`. A step dispatched
 * with no row yet (its invocation still queued, or lost) is not finished: its own wait bound settles it.
 */
export function finishedBefore(head: Pick<HourlyHead, 'children'>, rows: StepRow[], before: number): boolean {
  const sections = Object.keys(head.children) as Section[];
  return (
    sections.length > 0 &&
    sections.every((section) => {
      const row = rowOf(head, rows, section);
      return !!row && row.state !== 'running' && (row.finished_at ?? Infinity) < before;
    })
  );
}
