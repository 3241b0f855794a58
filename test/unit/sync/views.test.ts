import fs from 'node:fs';
import path from 'node:path';
import { HourlyHead, MANDATORY_SECTIONS, SectionResult, SyncErrorCode } from '../../../lib/sync/model';
import { STEP_CODE } from '../../../lib/sync/tbank/errors';
import {
  HOURLY_ERROR_CODES,
  HOURLY_SECTION_STATES,
  HOURLY_STATES,
  hourlyView,
  QUEUED_STATE,
} from '../../../lib/sync/views';

/**
 * GET /sync/{user}/hourly speaks the vocabulary docs/sync.md lists, whatever the head holds: every attempt state
 * (and one a later release might write), every code an attempt or a step can carry (and an unknown one), every
 * section state the settle writes.
 */
const DOC = fs.readFileSync(path.join(__dirname, '../../../docs/sync.md'), 'utf8');
const section = DOC.slice(DOC.indexOf('### What the hourly read shows'), DOC.indexOf('**The brokerage is'));
/** The backquoted words of a table row whose first cell is `field`. */
const documented = (field: string) => {
  const line = section.split('\n').find((l) => l.startsWith(`| ${field} |`))!;
  return [...line.split('|')[2].matchAll(/`([^`]+)`/g)].map((m) => m[1]);
};
const documentedCodes = [...section.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]);

const head = (over: Partial<HourlyHead>): HourlyHead => ({
  user_id: 'u',
  attempt_id: 'a',
  state: 'partial',
  started_at: 0,
  finished_at: 1,
  run_id: 'r',
  run_deadline: 2,
  walk_completed: true,
  children: {},
  revision: 1,
  ...over,
});

const codes = [...Object.values(SyncErrorCode), ...Object.values(STEP_CODE), 'A_CODE_OF_A_LATER_RELEASE', undefined];
const states = ['running', 'succeeded', 'partial', 'failed', 'cancelled'] as HourlyHead['state'][];
const sectionStates: SectionResult['state'][] = ['running', 'succeeded', 'failed', 'missing', 'expired'];

describe('the hourly read', () => {
  it('documents exactly its vocabulary in docs/sync.md', () => {
    expect(documented('`state`')).toEqual([...HOURLY_STATES, QUEUED_STATE]);
    expect(documented('`meta.sections.<section>.state`')).toEqual([...HOURLY_SECTION_STATES]);
    expect([...documentedCodes].sort()).toEqual([...HOURLY_ERROR_CODES].sort());
  });

  it('never shows a value outside it, whatever state, code and section state the head holds', () => {
    const vocabulary = new Set<unknown>([...HOURLY_ERROR_CODES, null]);
    let views = 0;
    for (const state of states)
      for (const error_code of codes)
        for (const sectionState of sectionStates) {
          const sections = Object.fromEntries(
            MANDATORY_SECTIONS.map((s) => [s, { state: sectionState, step_id: 's', error_code }]),
          );
          const view = hourlyView(head({ state, error_code, sections }));
          views++;
          expect(HOURLY_STATES).toContain(view.state);
          expect(vocabulary).toContain(view.meta.error_code);
          for (const result of Object.values(view.meta.sections!)) {
            expect(HOURLY_SECTION_STATES).toContain(result.state);
            expect(vocabulary).toContain('error_code' in result ? result.error_code : null);
            if (result.state === 'failed') expect(result.error_code).toEqual(expect.any(String));
          }
        }
    expect(views).toBe(states.length * codes.length * sectionStates.length);
  });

  it("keeps the design's INTERRUPTED and DEADLINE, maps the words it does not name, keeps every other code", () => {
    const view = (error_code: string, s: SectionResult) =>
      hourlyView(head({ error_code, sections: { portfolio: s } })).meta;
    expect(view('DEADLINE', { state: 'expired', step_id: 's', error_code: 'STEP_TIMEOUT' })).toEqual(
      expect.objectContaining({
        error_code: 'DEADLINE',
        sections: { portfolio: { state: 'failed', step_id: 's', error_code: 'DEADLINE' } },
      }),
    );
    expect(view('DISPATCH_FAILED', { state: 'missing', step_id: 's' })).toEqual(
      expect.objectContaining({
        error_code: 'INTERNAL',
        sections: { portfolio: { state: 'failed', step_id: 's', error_code: 'INTERNAL' } },
      }),
    );
    expect(view('INTERRUPTED', { state: 'succeeded', step_id: 's' }).error_code).toBe('INTERRUPTED');
    expect(view('TOKEN_INVALID', { state: 'failed', step_id: 's', error_code: 'TOKEN_INVALID' })).toEqual(
      expect.objectContaining({
        error_code: 'TOKEN_INVALID',
        sections: { portfolio: { state: 'failed', step_id: 's', error_code: 'TOKEN_INVALID' } },
      }),
    );
    expect(hourlyView(head({ state: 'running', error_code: undefined, sections: undefined })).meta).toMatchObject({
      error_code: null,
      sections: null,
    });
  });
});
