import { marshall } from '@aws-sdk/util-dynamodb';
import { downloadToItem, guardItem } from '../../../lib/downloads/keys';
import type { Download } from '../../../lib/downloads/model';
import { newId } from '../../../lib/ident';
import { attemptItem, stepItem } from '../../../lib/sync/keys';
import type { HourlyHead } from '../../../lib/sync/model';
import type { ScanJob } from '../../../lib/scan/model';
import { auditDownloads } from '../../../tools/soak/audit/downloads';
import { auditScan, envelopeCopies } from '../../../tools/soak/audit/scan';
import { auditStack } from '../../../tools/soak/audit/stack';
import { auditSync } from '../../../tools/soak/audit/sync';
import { auditTelegram } from '../../../tools/soak/audit/telegram';

/**
 * The soak's auditors, each fed a clean history (no violation) and then the
 * same history with one violation planted: the audit must name it.
 */

const T0 = Date.parse('2026-12-06T05:00:00Z');

describe('scan audit', () => {
  const sent = [{ job_id: 'j1', attempt: 1, sentAt: T0, resends: 0, lastSentAt: T0 }];
  const finished = {
    job_id: 'j1',
    state: 'finished',
    published: true,
    result: { status: 'done', raw_s3_key: 'raw/j1.json' },
  };
  const env = (status: string) => ({ job_id: 'j1', attempt: 1, status, msg_id: `j1:1:${status}`, at: T0 + 1000 });
  const objects: Record<string, string> = { 'raw/j1.json': '{"answers":[]}' };
  const input = (over: object = {}) => ({
    sent,
    seen: [env('processing'), env('done')],
    job: async () => finished as unknown as ScanJob,
    object: async (key: string) => objects[key],
    ...over,
  });

  it('clean: no violation', async () => {
    expect(await auditScan(input())).toEqual([]);
  });

  it('copies of one final under one Nats-Msg-Id are one answer (the core drops the copy)', async () => {
    expect(await auditScan(input({ seen: [env('processing'), env('done'), env('done')] }))).toEqual([]);
    expect(envelopeCopies([env('processing'), env('done'), env('done'), env('done')])).toBe(2);
  });

  it('a duplicated final envelope, a lost one', async () => {
    const other = { ...env('done'), msg_id: 'j1:1:done-again' };
    expect(await auditScan(input({ seen: [env('processing'), env('done'), other] }))).toEqual([
      expect.objectContaining({ invariant: 'scan: exactly one final envelope per request' }),
    ]);
    expect(await auditScan(input({ seen: [env('processing')] }))).toEqual([
      expect.objectContaining({ invariant: 'scan: exactly one final envelope per request' }),
    ]);
  });

  it('a job left non-terminal, a raw answer missing or foreign', async () => {
    const submitted = { ...finished, state: 'submitted', published: false };
    expect(await auditScan(input({ job: async () => submitted }))).toEqual([
      expect.objectContaining({ invariant: 'scan: no job left non-terminal' }),
    ]);
    expect(await auditScan(input({ object: async () => undefined }))).toEqual([
      expect.objectContaining({ invariant: 'scan: raw answer in S3 matches its job' }),
    ]);
    const foreign = { ...finished, result: { status: 'done', raw_s3_key: 'raw/other.json' } };
    expect(await auditScan(input({ job: async () => foreign }))).toEqual([
      expect.objectContaining({ invariant: 'scan: raw answer in S3 matches its job' }),
    ]);
  });
});

describe('downloads audit', () => {
  const hash = 'ab'.repeat(20);
  const download = (id: string, state: Download['state']): Download => ({
    id,
    state,
    name: 'soak',
    infohashes: [{ infohash: hash, kind: 'v1' }],
    created_at: '2026-12-06T05:00:00.000Z',
    updated_at: '2026-12-06T05:00:00.000Z',
    revision: 1,
  });
  const a = newId();
  const b = newId();
  const torrent = { hash, category: 'torrent-scan-sync', name: 'soak' };
  const foreign = { hash: 'cd'.repeat(20), category: 'soak-foreign', name: 'f', tags: '', save_path: '/x' };
  const clean = {
    items: [
      downloadToItem(download(a, 'downloading')),
      guardItem(hash, a, 'x'),
      downloadToItem(download(b, 'cancelled')),
    ],
    created: [{ id: a, status: 201, at: T0 }],
    torrents: [torrent, foreign],
    category: 'torrent-scan-sync',
    foreign: { before: foreign, after: foreign },
  };

  it('clean: no violation', () => {
    expect(auditDownloads(clean)).toEqual([]);
  });

  it('two active downloads for one infohash', () => {
    const items = [...clean.items.slice(0, 2), downloadToItem(download(b, 'queued'))];
    expect(auditDownloads({ ...clean, items }).map((v) => v.invariant)).toContain(
      'downloads: at most one active download per infohash',
    );
  });

  it('a create answered 2xx that is not in the table; a guard naming a finished download', () => {
    expect(auditDownloads({ ...clean, created: [...clean.created, { id: newId(), status: 201, at: T0 }] })).toEqual([
      expect.objectContaining({ invariant: 'downloads: every create answered 2xx is readable' }),
    ]);
    const items = [downloadToItem(download(a, 'completed')), guardItem(hash, a, 'x')];
    expect(auditDownloads({ ...clean, items, created: [] }).map((v) => v.invariant)).toContain(
      'downloads: the guard names the active download',
    );
  });

  it('client and store disagree; the foreign torrent touched', () => {
    expect(auditDownloads({ ...clean, torrents: [foreign] })).toEqual([
      expect.objectContaining({ invariant: 'downloads: client and store agree after the drain' }),
    ]);
    const stray = { hash: 'ef'.repeat(20), category: 'torrent-scan-sync', name: 'stray' };
    expect(auditDownloads({ ...clean, torrents: [...clean.torrents, stray] })).toEqual([
      expect.objectContaining({ invariant: 'downloads: client and store agree after the drain' }),
    ]);
    const moved = { ...foreign, category: 'torrent-scan-sync' };
    expect(auditDownloads({ ...clean, foreign: { before: foreign, after: moved } })).toEqual([
      expect.objectContaining({ invariant: 'downloads: no torrent outside the category touched' }),
    ]);
  });
});

describe('sync audit', () => {
  const user = newId();
  const attempt = newId().toLowerCase();
  const sections = ['portfolio', 'operations', 'events.refresh', 'catalog.enrichment'] as const;
  const head: HourlyHead = {
    user_id: user,
    attempt_id: attempt,
    state: 'succeeded',
    started_at: T0 + 60_000,
    finished_at: T0 + 90_000,
    run_id: 'r',
    run_deadline: T0 + 120_000,
    walk_completed: true,
    children: Object.fromEntries(sections.map((s) => [s, `${s}-step`])),
    revision: 3,
  };
  const rows = sections.map((section) =>
    stepItem({
      attempt_id: attempt,
      step_id: `${section}-step`,
      section,
      state: 'succeeded',
      started_at: T0 + 61_000,
      finished_at: T0 + 80_000,
    }),
  );
  const clean = {
    items: [attemptItem(head), ...rows],
    connections: [{ user_id: user, token: 't.soaksecret123', at: T0 }],
    end: T0 + 10 * 60_000,
    windows: [],
    logs: new Map([['serverless-offline.log', 'sync_step_finished ok\n']]),
  };

  it('clean: no violation', () => {
    expect(auditSync(clean)).toEqual([]);
  });

  it('a stuck attempt; an outcome its rows do not give', () => {
    expect(auditSync({ ...clean, items: [attemptItem({ ...head, state: 'running' }), ...rows] })).toEqual([
      expect.objectContaining({ invariant: 'sync: every attempt terminal' }),
    ]);
    const failedRow = stepItem({
      attempt_id: attempt,
      step_id: 'portfolio-step',
      section: 'portfolio',
      state: 'failed',
      error_code: 'RATE_LIMITED',
      started_at: T0,
      finished_at: T0,
    });
    expect(auditSync({ ...clean, items: [attemptItem(head), failedRow, ...rows.slice(1)] })).toEqual([
      expect.objectContaining({ invariant: 'sync: outcome derived from its step rows' }),
    ]);
  });

  it('a connection with no attempt past the tick slack; a token in a log', () => {
    expect(auditSync({ ...clean, items: [] })).toEqual([
      expect.objectContaining({ invariant: 'sync: no hour skipped without a recorded reason' }),
    ]);
    // The same gap overlapped by a fault as long as it is no violation.
    const windows = [{ kind: 'stop', target: 'dynamodb-local', start: T0, end: T0 + 10 * 60_000 }];
    expect(auditSync({ ...clean, items: [], windows })).toEqual([]);
    const logs = new Map([['serverless-offline.log', 'request {"token":"t.soaksecret123"}\n']]);
    expect(auditSync({ ...clean, logs })).toEqual([
      expect.objectContaining({ invariant: 'sync: no T-Bank token in any log' }),
    ]);
  });
});

describe('telegram audit', () => {
  const id = newId();
  const record = {
    eventID: 'ev-1',
    eventName: 'INSERT',
    dynamodb: {
      SequenceNumber: '100',
      NewImage: marshall({
        PK: `DL#${id}`,
        SK: 'META',
        entity: 'download',
        id,
        name: 'Sintel',
        state: 'queued',
        infohashes: [],
      }),
    },
  };
  const delivery = (chat: number, message: number, status = 'sent') => ({
    PK: 'EV#ev-1',
    SK: `CHAT#${chat}`,
    entity: 'delivery',
    status,
    chat_id: chat,
    message_id: message,
  });
  const clean = {
    records: [record],
    chats: [-1, -2],
    items: [delivery(-1, 1), delivery(-2, 1), { PK: 'UPD#7', SK: 'UPD', status: 'done' }],
    messages: [
      { chat_id: -1, message_id: 1, text: `Added ${id}` },
      { chat_id: -2, message_id: 1, text: `Added ${id}` },
    ],
    presses: [{ update_id: 7, data: `v1:o:${id}`, at: T0, status: 200, answered: true }],
    windows: [],
  };

  it('clean: no violation', () => {
    expect(auditTelegram(clean)).toEqual([]);
  });

  it('a lost notification: failed, or recorded sent but not in the chat', () => {
    expect(
      auditTelegram({
        ...clean,
        items: [delivery(-1, 1), delivery(-2, 1, 'failed'), clean.items[2]],
        messages: clean.messages.slice(0, 1),
      }),
    ).toEqual([expect.objectContaining({ invariant: 'telegram: every notification delivered once' })]);
    expect(auditTelegram({ ...clean, messages: clean.messages.slice(0, 1) })).toEqual([
      expect.objectContaining({ invariant: 'telegram: every notification delivered once' }),
    ]);
  });

  it('a notification sent twice; a press the bot never recorded', () => {
    const twice = [...clean.messages, { chat_id: -1, message_id: 2, text: `Added ${id}` }];
    expect(auditTelegram({ ...clean, messages: twice })).toEqual([
      expect.objectContaining({ invariant: 'telegram: no notification sent twice' }),
    ]);
    expect(auditTelegram({ ...clean, items: clean.items.slice(0, 2) })).toEqual([
      expect.objectContaining({ invariant: 'telegram: every button press acted on once' }),
    ]);
    // Recorded, but its handling never finished (the invocation died in it).
    const unfinished = [...clean.items.slice(0, 2), { PK: 'UPD#7', SK: 'UPD', status: 'handling' }];
    expect(auditTelegram({ ...clean, items: unfinished })).toEqual([
      expect.objectContaining({ invariant: 'telegram: every button press acted on once' }),
    ]);
  });

  it('a press the webhook refused is a violation outside a fault window, pending at Telegram inside one', () => {
    const refused = {
      ...clean,
      items: clean.items.slice(0, 2),
      presses: [{ ...clean.presses[0], status: 0, answered: false }],
    };
    expect(auditTelegram(refused)).toEqual([
      expect.objectContaining({ invariant: 'telegram: every button press acted on once' }),
    ]);
    const windows = [{ kind: 'stop', target: 'serverless-offline', start: T0 - 5000, end: T0 + 20_000 }];
    expect(auditTelegram({ ...refused, windows })).toEqual([]);
  });

  it('a press acted on whose answer came too late for Telegram: a violation outside a fault window, not inside one', () => {
    // The one-hour soak: offline stopped 3 s before a press and 21 s after; handled then, the answer refused as too old.
    const late = { ...clean, presses: [{ ...clean.presses[0], status: 200, answered: false }] };
    expect(auditTelegram(late)).toEqual([
      expect.objectContaining({ invariant: 'telegram: every button press acted on once' }),
    ]);
    const windows = [{ kind: 'stop', target: 'serverless-offline', start: T0 - 3000, end: T0 + 21_000 }];
    expect(auditTelegram({ ...late, windows })).toEqual([]);
    // Never handled to the end stays a violation inside a window too.
    const unfinished = [...clean.items.slice(0, 2), { PK: 'UPD#7', SK: 'UPD', status: 'handling' }];
    expect(auditTelegram({ ...late, items: unfinished, windows })).toEqual([
      expect.objectContaining({ invariant: 'telegram: every button press acted on once' }),
    ]);
  });
});

describe('stack audit', () => {
  const windows = [{ kind: 'kill', target: 's3rver', start: T0, end: T0 + 20_000, recoveredAt: T0 + 25_000 }];
  const clean = {
    deaths: [{ at: T0 + 1000, line: 's3rver (pid 1) died after start: killed by SIGKILL; restarted as pid 2' }],
    windows,
    logs: new Map([['a.log', 'fine\n']]),
    serverErrors: [{ at: T0 + 5000, what: 'download create', status: 503 }],
  };

  it('clean: the killed service and the 5xx inside its window are no violation', () => {
    expect(auditStack(clean)).toEqual([]);
  });

  it('a death nobody caused, a fatal stop, an unhandled rejection, a 5xx outside every window', () => {
    const found = auditStack({
      ...clean,
      fatal: 'nats-server: exited',
      deaths: [...clean.deaths, { at: T0 + 1000, line: 'nats-server (pid 3) died after start: exited with code 1' }],
      logs: new Map([['offline.log', 'x\nUnhandled Rejection at: Promise\n']]),
      serverErrors: [...clean.serverErrors, { at: T0 + 10 * 60_000, what: 'page render', status: 500 }],
    });
    expect(found.map((v) => v.invariant)).toEqual([
      'stack: no process crashed',
      'stack: no process crashed',
      'stack: no unhandled rejection in the logs',
      'stack: 5xx only inside fault windows',
    ]);
  });
});
