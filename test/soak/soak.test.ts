import { PutCommand } from '@aws-sdk/lib-dynamodb';
import path from 'node:path';
import { createAwsClients, TOOL_DYNAMODB_LIMITS } from '../../lib/aws/clients';
import { loadConfig } from '../../lib/config';
import { downloadFromItem, downloadToItem } from '../../lib/downloads/keys';
import { isActive } from '../../lib/downloads/model';
import { newId } from '../../lib/ident';
import { attemptItem } from '../../lib/sync/keys';
import { allItems } from '../../tools/soak/audit/sources';
import { formatReport } from '../../tools/soak/report';
import { runSoak, SoakRun } from '../../tools/soak/run';

/**
 * The CI soak (docs/testing.md, "Soak"): `npm run soak`'s runner for 2 minutes on a stack of its own
 * (npm start's: schedules on, the real qbittorrent-nox), with a few quick faults, then the audit: zero
 * violations. Then violations planted in the stores on purpose (a second active download for an infohash,
 * an attempt left running) must be reported by the same audit.
 */
const ROOT = path.resolve(__dirname, '..', '..');
let run: SoakRun | undefined;

afterAll(async () => {
  await run?.stop();
});

it('two minutes of the three domains under faults: every invariant holds', async () => {
  const lines: string[] = [];
  run = await runSoak({
    root: ROOT,
    minutes: 2,
    // Its schedule opens with Telegram 500s, DynamoDB Local stopped, offline stopped (13 s each), then qBittorrent.
    seed: 318,
    chaos: true,
    // Quick faults the service is built to ride out with nothing lost; kills are the long run's (a kill of offline
    // rebuilds every bundle). Decision 352.
    kinds: ['stop', 'telegram-429', 'telegram-5xx', 'tbank-storm', 'tbank-5xx'],
    // The hot folder is a Samba share of the stack's (the default as root, as CI runs): smbd is stopped too.
    hotFolder: 'smb',
    stoppable: ['dynamodb-local', 'nats-server', 's3rver', 'qbittorrent-nox', 'smbd', 'serverless-offline'],
    timing: { faultMs: [8_000, 15_000], gapMs: [8_000, 15_000], recoveryTimeoutMs: 90_000 },
    drainMinMs: 65_000,
    drainMs: 180_000,
    say: (line) => void lines.push(line),
    progress: { write: () => true },
  });
  const text = formatReport(run.report);
  process.stdout.write(text);
  expect(run.report.windows.length).toBeGreaterThanOrEqual(2);
  expect(run.report.operations_total).toBeGreaterThan(50);
  expect({ violations: run.report.violation_details, log: lines.slice(-20) }).toEqual({
    violations: [],
    log: expect.any(Array),
  });
}, 600_000);

it('the audit reports violations planted in the stores: two active downloads for one infohash, an attempt left running', async () => {
  if (!run) throw new Error('the soak did not run');
  const env = { ...process.env, ...run.stack.stack.env };
  const config = loadConfig(env);
  const aws = createAwsClients(config, TOOL_DYNAMODB_LIMITS);
  try {
    const items = await allItems(aws.documents, config.tables.downloads);
    const active = items
      .filter((i) => i.entity === 'download' && i.SK === 'META')
      .map(downloadFromItem)
      .find((d) => isActive(d.state));
    if (!active) throw new Error('no active download to plant a twin of');
    // Written directly, past every guard: what a broken transaction would leave.
    const twin = { ...active, id: newId(), name: 'planted twin' };
    await aws.documents.send(new PutCommand({ TableName: config.tables.downloads, Item: downloadToItem(twin) }));
    const attempt = newId().toLowerCase();
    await aws.documents.send(
      new PutCommand({
        TableName: config.tables.sync,
        Item: attemptItem({
          user_id: newId(),
          attempt_id: attempt,
          state: 'running',
          started_at: Date.now() - 3_600_000,
          run_id: 'planted',
          run_deadline: Date.now() - 3_000_000,
          walk_completed: false,
          children: {},
          revision: 1,
        }),
      }),
    );
    const found = await run.audit();
    expect(found).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          invariant: 'downloads: at most one active download per infohash',
          detail: expect.stringContaining(twin.id),
        }),
        expect.objectContaining({
          invariant: 'sync: every attempt terminal',
          detail: expect.stringContaining(attempt),
        }),
      ]),
    );
  } finally {
    aws.dynamodb.destroy();
    aws.s3.destroy();
  }
}, 120_000);
