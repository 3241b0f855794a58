import { randomUUID } from 'node:crypto';
import { HttpError } from '../../../lib/http/errors';
import { newId } from '../../../lib/ident';
import type { JobSummary } from '../../../lib/scan/model';
import { HOUR_MS, HourlyHead, MANDATORY_SECTIONS } from '../../../lib/sync/model';
import { quantile, quantileChart } from '../../../lib/web/charts';
import {
  CONSOLE_PAGE_ROWS,
  hourlyBuckets,
  jobPhase,
  scanListPage,
  syncListPage,
  syncUserPage,
} from '../../../lib/web/console';
import { parseConsoleQuery, parseJobId } from '../../../lib/web/console-requests';
import { uiOf } from '../../../lib/web/locale';
import { layout } from '../../../lib/web/shell';

/** The console's pure parts: phases, quantiles, buckets, the query at the edge, and each page's size at 1,000 rows. */

const NOW = Date.UTC(2026, 11, 4, 12, 30);
const viewer = { principal: 'op', canWrite: true, scopes: ['downloads:read', 'scan:read', 'sync:read'], csrf: 'c' };
const ui = uiOf('en', 'UTC');
const bytes = (page: { title: string; body: { text: string } }) =>
  Buffer.byteLength(layout(page as never, { nonce: 'n', viewer, ui }));
/** A page's text as a person reads it: tags gone (ids are split in unbreakable segments). */
const textOf = (markup: string) => markup.replace(/<[^>]*>/g, '');

function job(i: number, over: Partial<JobSummary> = {}): JobSummary {
  const created = NOW - (i % 24) * HOUR_MS - 1000;
  return {
    job_id: randomUUID(),
    file_id: randomUUID(),
    attempt: 1,
    state: 'finished',
    created_at: created,
    submitted_at: created + 100,
    answered_at: created + 5000 + i,
    finished_at: created + 7000 + i,
    published_at: created + 7100 + i,
    published: true,
    status: i % 10 === 0 ? 'error' : 'done',
    error_code: i % 10 === 0 ? 'TIMEOUT' : undefined,
    ...over,
  };
}

describe('job phases', () => {
  it.each([
    [{ state: 'queued' }, 'queued'],
    [{ state: 'starting' }, 'starting'],
    [{ state: 'submitted' }, 'in-input'],
    [{ state: 'submitted', answered_at: 1 }, 'settling'],
    [{ state: 'finished', published: false, status: 'done' }, 'publishing'],
    [{ state: 'finished', published: true, status: 'done' }, 'done'],
    [{ state: 'finished', published: true, status: 'needs_check' }, 'needs_check'],
    [{ state: 'finished', published: true, status: 'error' }, 'error'],
    // An unknown status from a newer writer is an error to look at, never "done".
    [{ state: 'finished', published: true, status: 'DONE' }, 'error'],
  ] as const)('%j → %s', (j, phase) => {
    expect(jobPhase(j as never)).toBe(phase);
  });
});

describe('quantiles and buckets', () => {
  it('nearest rank: median and p90 of 1..10 are 5 and 9; none is undefined', () => {
    const xs = Array.from({ length: 10 }, (_, i) => i + 1);
    expect([quantile(xs, 0.5), quantile(xs, 0.9), quantile([], 0.5), quantile([7], 0.9)]).toEqual([5, 9, undefined, 7]);
  });

  it('puts each job in the hour it was created, the current hour last; older and future jobs nowhere', () => {
    const jobs = [
      job(0, { created_at: NOW - 1 }),
      job(0, { created_at: NOW - 3 * HOUR_MS }),
      job(0, { created_at: NOW - 30 * HOUR_MS }),
      job(0, { created_at: NOW + 2 * HOUR_MS }),
    ];
    const buckets = hourlyBuckets(ui, jobs, NOW, 24, (j) => j.created_at);
    expect(buckets).toHaveLength(24);
    expect(buckets[23]).toMatchObject({ label: '12:00', values: [NOW - 1] });
    expect(buckets[20].values).toEqual([NOW - 3 * HOUR_MS]);
    expect(buckets.reduce((n, b) => n + b.values.length, 0)).toBe(2);
  });

  it('draws a bar per bucket with values and says what it shows in text', () => {
    const svg = quantileChart(ui, 'Settle', [
      { label: '1h', values: [1000, 2000, 9000] },
      { label: '2h', values: [] },
    ]).text;
    expect(svg.match(/<rect class="bar"/g)).toHaveLength(1);
    expect(svg).toContain('role="img"');
    expect(svg).toContain('the highest p90 9.0 s');
    expect(svg).toContain('<td>1h</td><td>3</td><td>2.0 s</td><td>9.0 s</td>');
  });
});

describe('the query at the edge', () => {
  it('reads each field once, lower-cases a job id prefix, and refuses anything else with a 400', () => {
    expect(parseConsoleQuery({ phase: 'done', prefix: 'AB12-', page: '3' })).toEqual({
      phase: 'done',
      prefix: 'ab12-',
      page: 3,
    });
    for (const bad of [
      { phase: 'Done' },
      { phase: '__proto__' },
      { prefix: '../etc' },
      { prefix: 'a'.repeat(37) },
      { prefix: '\ud800' },
      { page: '0' },
      { page: '99999999999999999999' },
      { page: '1e3' },
      { after: 'not-an-id' },
      { attempt: '<script>' },
      { constructor: 'x' },
      { __proto__: 'x' } as Record<string, string>,
      JSON.parse('{"__proto__": "x"}') as Record<string, string>,
    ]) {
      let err: unknown;
      try {
        parseConsoleQuery(bad);
      } catch (e) {
        err = e;
      }
      // `{ __proto__: 'x' }` as a literal sets no own field: nothing to refuse.
      if (Object.keys(bad).length === 0) continue;
      expect([bad, err instanceof HttpError && err.status]).toEqual([bad, 400]);
    }
  });

  it('job ids: a canonical UUID in any case is read lower-cased; anything else is a 404', () => {
    const id = randomUUID();
    expect(parseJobId({ pathParameters: { job_id: id.toUpperCase() } })).toBe(id);
    for (const bad of ['', 'x', `${id}0`, id.replace(/-/g, ''), `{${id}}`, '../../etc/passwd', '__proto__']) {
      expect(() => parseJobId({ pathParameters: { job_id: bad } })).toThrow(
        expect.objectContaining({ status: 404 }) as Error,
      );
    }
  });
});

describe('pages at 1,000 rows', () => {
  it('/scan with 1,000 jobs in the window: one page of rows, the chart over all, under 200 KB', () => {
    const jobs = Array.from({ length: 1000 }, (_, i) => job(i));
    const page = scanListPage(ui, {
      jobs,
      now: NOW,
      hours: 24,
      page: 1,
      truncated: false,
      slots: { inUse: 3, max: 4 },
    });
    expect(page.body.text).toContain('Slots in use: <strong>3</strong> of 4.');
    expect(page.body.text.match(/<tr><td data-label="Job"><a class="mono"/g)).toHaveLength(CONSOLE_PAGE_ROWS);
    expect(page.body.text).toContain('Page 1 of 10');
    expect(bytes(page)).toBeLessThan(200 * 1024);
    // The last page, and a page number past the end, show the last rows.
    expect(scanListPage(ui, { jobs, now: NOW, hours: 24, page: 99, truncated: false }).body.text).toContain(
      'Page 10 of 10',
    );
  });

  it('/sync with a page of users and /sync/{user} with 96 attempts stay under 200 KB; tokens never appear', () => {
    const users = Array.from({ length: 100 }, () => ({ user_id: newId(), created_at: new Date(NOW).toISOString() }));
    expect(bytes(syncListPage(ui, { users, paged: false, next: users[99].user_id }))).toBeLessThan(200 * 1024);
    const user = newId();
    const attempts: HourlyHead[] = Array.from({ length: 96 }, (_, i) => ({
      user_id: user,
      attempt_id: newId(NOW - i * HOUR_MS),
      state: i % 7 === 0 ? 'partial' : 'succeeded',
      error_code: i % 7 === 0 ? 'DEADLINE' : undefined,
      started_at: NOW - i * HOUR_MS,
      run_id: 'r',
      run_deadline: 0,
      walk_completed: true,
      children: {},
      revision: 1,
    }));
    const page = syncUserPage(ui, {
      user,
      attempts,
      selected: { ...attempts[0], rows: [] },
      rates: [{ service: 'OperationsService', window_start: NOW, calls: 250 }],
      now: NOW,
    });
    const text = page.body.text;
    expect(bytes(page)).toBeLessThan(200 * 1024);
    // 48 cells, one per hour, each linking to the attempt of that hour; DEADLINE marked.
    expect(text.match(/<li class="cell/g)).toHaveLength(48);
    expect(text.match(/<li class="cell st-partial/g)!.length).toBe(7);
    expect(text).toContain('>D</a>');
    // The budget bar never shows more than the limit, the count shows what was taken.
    expect(text).toContain('value="200"');
    expect(text).toContain('250 / 200');
    for (const section of MANDATORY_SECTIONS) expect(textOf(text)).toContain(section);
  });

  it('hostile data is text, never markup', () => {
    const page = scanListPage(ui, {
      jobs: [job(1, { error_code: '<img src=x onerror=alert(1)>', job_id: '"><script>alert(1)</script>' })],
      now: NOW,
      hours: 24,
      page: 1,
      truncated: false,
    });
    expect(page.body.text).not.toContain('<script>');
    expect(page.body.text).not.toContain('<img');
    expect(textOf(page.body.text)).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });
});
