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
 * Its error code is the first problem by precedence: INTERRUPTED, DEADLINE,
 * then the steps' own codes in section order. A second-phase section never
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

const PRECEDENCE: string[] = [SyncErrorCode.INTERRUPTED, SyncErrorCode.DEADLINE];

function firstByPrecedence(problems: string[]): string | undefined {
  for (const code of PRECEDENCE) if (problems.includes(code)) return code;
  return problems[0];
}

/**
 * The terminal barrier: every mandatory step has a finished row, or its wait is
 * over (dispatch + bound). Until then settling would judge too early.
 */
export function barrierReached(
  head: Pick<HourlyHead, 'walk_completed' | 'children' | 'started_at'>,
  rows: StepRow[],
  now: number,
  waitBoundMs: number,
): boolean {
  if (!head.walk_completed) return false;
  const waitOver = now >= head.started_at + waitBoundMs;
  return MANDATORY_SECTIONS.every((section) => {
    if (waitOver) return true;
    if (!head.children[section]) {
      // A second phase is still to come while every section it depends on can yet succeed.
      const needs = SECTION_DEPENDS_ON[section];
      return !needs || needs.some((dep) => !head.children[dep] || rowOf(head, rows, dep)?.state === 'failed');
    }
    const row = rowOf(head, rows, section);
    return !!row && row.state !== 'running';
  });
}

/** The second-phase sections not yet dispatched whose every dependency has succeeded. */
export function readyToDispatch(head: Pick<HourlyHead, 'walk_completed' | 'children'>, rows: StepRow[]): Section[] {
  if (!head.walk_completed) return [];
  return MANDATORY_SECTIONS.filter((section) => {
    const needs = SECTION_DEPENDS_ON[section];
    return !!needs && !head.children[section] && needs.every((dep) => rowOf(head, rows, dep)?.state === 'succeeded');
  });
}

function rowOf(head: Pick<HourlyHead, 'children'>, rows: StepRow[], section: Section): StepRow | undefined {
  return rows.find((r) => r.section === section && r.step_id === head.children[section]);
}

/** Every dispatched step has finished, the last of them before `before`. */
export function finishedBefore(head: Pick<HourlyHead, 'children'>, rows: StepRow[], before: number): boolean {
  const mine = rows.filter((r) => head.children[r.section] === r.step_id);
  return mine.length > 0 && mine.every((r) => r.state !== 'running' && (r.finished_at ?? Infinity) < before);
}
