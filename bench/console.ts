import { randomUUID } from 'node:crypto';
import { batchWriteAll, putRequest } from '../lib/aws/batch';
import { newId } from '../lib/ident';
import { DynamoDbScanJobStore } from '../lib/scan/dynamodb-store';
import { rawAnswerKey, toItem } from '../lib/scan/keys';
import type { ScanJob } from '../lib/scan/model';
import { DynamoSyncStore } from '../lib/sync/dynamodb-store';
import { connectionItem, headItem } from '../lib/sync/keys';
import { HOUR_MS } from '../lib/sync/model';
import { CONSOLE_PAGE_ROWS, scanListPage, syncListPage } from '../lib/web/console';
import { uiOf } from '../lib/web/locale';
import { layout } from '../lib/web/shell';
import { BenchStack, report, throughput } from './support';

/**
 * The operator console's pages with 1,000 rows, against the JSON answer of the
 * same rows read the same way (what a JSON route would do: read, serialise).
 * There is no JSON route for the scan window or the user list, so both sides
 * run in-process on the bench's DynamoDB Local: the ratio is the cost of the
 * HTML (rendering, the chart) on top of the same reads. Goal: ≤ x1.5.
 */
const N = 1000;
const viewer = { principal: 'bench', canWrite: true, scopes: ['downloads:read', 'scan:read', 'sync:read'], csrf: 'c' };

export async function consolePages(
  bench: BenchStack,
): Promise<Array<{ route: string; html: number; json: number; kib: number }>> {
  const now = Date.now();
  const jobs = new DynamoDbScanJobStore(bench.aws.documents, bench.config.tables.scan);
  const sync = new DynamoSyncStore({ documents: bench.aws.documents, table: bench.config.tables.sync });
  await batchWriteAll(
    bench.aws.documents,
    bench.config.tables.scan,
    Array.from({ length: N }, (_, i) => putRequest(toItem(scanJob(now - (i * 24 * HOUR_MS) / N)))),
  );
  const users = Array.from({ length: N }, () => newId());
  await batchWriteAll(
    bench.aws.documents,
    bench.config.tables.sync,
    users.flatMap((u, i) => [
      putRequest(connectionItem(u, 'sealed', now)),
      putRequest(
        headItem({
          user_id: u,
          attempt_id: newId(),
          state: i % 9 ? 'succeeded' : 'partial',
          error_code: i % 9 ? undefined : 'DEADLINE',
          started_at: now - (i % 60) * 60_000,
          run_id: 'bench',
          run_deadline: now,
          walk_completed: true,
          children: {},
          revision: 1,
          due_at: now + HOUR_MS,
        }),
      ),
    ]),
  );

  const readScan = () => jobs.recent(now - 24 * HOUR_MS, now, 2001);
  // Russian in Moscow: the heavier of the two languages' renderings (plurals, Intl formatting in a zone).
  const ui = uiOf('ru', 'Europe/Moscow');
  const readUsers = async () => {
    const page = await sync.connectionPage(CONSOLE_PAGE_ROWS);
    const heads = new Map((await sync.headsOf(page.items.map((c) => c.user_id))).map((h) => [h.user_id, h]));
    return { page, heads };
  };
  const scanHtml = async () => {
    const read = await readScan();
    if (read.length !== N) throw new Error(`expected ${N} jobs in the window, read ${read.length}`);
    const page = scanListPage(ui, { jobs: read, now, hours: 24, page: 1, truncated: false });
    return layout(page, { nonce: 'n', viewer, ui });
  };
  const scanJson = async () => JSON.stringify({ items: await readScan() });
  const usersHtml = async () => {
    const { page, heads } = await readUsers();
    const users = page.items.map((c) => ({ ...c, head: heads.get(c.user_id) }));
    return layout(syncListPage(ui, { users, next: page.next, paged: false }), { nonce: 'n', viewer, ui });
  };
  const usersJson = async () => {
    const { page, heads } = await readUsers();
    return JSON.stringify({ items: page.items.map((c) => ({ ...c, head: heads.get(c.user_id) })), next: page.next });
  };

  const out: Array<{ route: string; html: number; json: number; kib: number }> = [];
  for (const [route, html, json, runs] of [
    ['/scan (1,000 jobs)', scanHtml, scanJson, 30],
    ['/sync (1,000 users, 100 a page)', usersHtml, usersJson, 100],
  ] as const) {
    const kib = Buffer.byteLength(await html()) / 1024;
    await throughput(5, 1, json); // warm-up
    await throughput(5, 1, html);
    out.push({ route, json: await throughput(runs, 1, json), html: await throughput(runs, 1, html), kib });
  }
  return out;
}

function scanJob(createdAt: number): ScanJob {
  const id = randomUUID();
  const answered = createdAt + 4000 + Math.random() * 4000;
  return {
    job_id: id,
    request: {
      schema_version: '1.0',
      job_id: id,
      file_id: randomUUID(),
      attempt: 1,
      pipeline: 'image',
      s3: { bucket: 'bench', key: `inbox/${id}.pdf` },
      original_name: 'scan.pdf',
      reply_deadline: new Date(createdAt + 600_000).toISOString(),
    },
    request_hash: 'x'.repeat(64),
    state: 'finished',
    created_at: createdAt,
    started_at: createdAt,
    submitted_at: createdAt + 120,
    settle: { snapshot: 'a.json:10', first_seen_at: answered },
    finished_at: answered + 2000,
    published: true,
    published_at: answered + 2080,
    result: {
      schema_version: '1.0',
      job_id: id,
      file_id: randomUUID(),
      attempt: 1,
      status: 'done',
      service: { name: 'bench', version: '0' },
      error: null,
      raw_s3_key: rawAnswerKey(id),
      metrics: { warnings: [] },
      documents: [{ text: 'x'.repeat(2000) }],
    },
    revision: 3,
  };
}

export function reportConsolePages(rows: Awaited<ReturnType<typeof consolePages>>): void {
  for (const r of rows)
    report(`Console ${r.route}: the page (${r.kib.toFixed(0)} KiB) against the JSON of the same rows`, [
      { name: 'JSON answer', opsPerSecond: r.json, note: 'read + JSON.stringify' },
      {
        name: 'HTML page',
        opsPerSecond: r.html,
        note: `read + render; x${(r.json / r.html).toFixed(2)} the JSON time (goal ≤ x1.5)`,
      },
    ]);
}
