import {
  AttributeValue,
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  PutItemCommand,
  DeleteItemCommand,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseRestoreArgs, runRestore, UsageError } from '../../../tools/ops/restore-table';
import { canonical, scanItems } from '../../../tools/ops/table-copy';
import { planResources } from '../../../tools/stack/resources';
import { stackClients, stackDefinition } from '../../support/stack';

/**
 * The restore drill on DynamoDB Local, as far as it goes: a table shaped as
 * the template's downloads table (indexes, stream, TTL, deletion protection)
 * is "restored" (DynamoDB Local has no PITR: a scan copy), its settings
 * re-applied and verified; then cut-over (b), the copy back, dry run and for
 * real. The steps DynamoDB Local cannot run are reported with their AWS CLI
 * command, and checked to be.
 */

const ROOT = path.resolve(__dirname, '../../..');
const aws = stackClients();
const client = aws.dynamodb;
const tag = `${process.pid}-${Date.now()}`;
const source = `torrent-scan-sync-test-downloads-drill-${tag}`;
const restored = `${source}-restored`;
const created: string[] = [];

function item(i: number): Record<string, AttributeValue> {
  return {
    PK: { S: `DL#${String(i).padStart(26, '0')}` },
    SK: { S: 'META' },
    GSI1PK: { S: 'DL' },
    GSI1SK: { S: String(i).padStart(26, '0') },
    name: { S: `drill item ${i} ✓` },
    revision: { N: String(i) },
    // More digits than a JavaScript number holds: a copy through the document client would refuse or round it.
    size: { N: '123456789012345678901234567890.5' },
    hashes: { SS: [`h${i}a`, `h${i}b`] },
    ports: { NS: ['6881', String(7000 + i)] },
    blob: { B: Buffer.from([i % 256, 0, 255]) },
    meta: { M: { ok: { BOOL: i % 2 === 0 }, none: { NULL: true }, list: { L: [{ S: 'x' }, { N: '1' }] } } },
    ...(i % 10 === 0 ? { expires_at: { N: String(2_000_000_000 + i) } } : {}),
  };
}

beforeAll(async () => {
  const table = planResources(stackDefinition().resources.Resources).tables.find(
    (t) => t.logicalId === 'DownloadsTable',
  )!;
  expect(table.create.StreamSpecification).toEqual({ StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' });
  await client.send(new CreateTableCommand({ ...table.create, TableName: source, DeletionProtectionEnabled: true }));
  created.push(source);
  await client.send(
    new UpdateTimeToLiveCommand({
      TableName: source,
      TimeToLiveSpecification: { Enabled: true, AttributeName: 'expires_at' },
    }),
  );
  for (let i = 0; i < 250; i++) await client.send(new PutItemCommand({ TableName: source, Item: item(i) }));
}, 120_000);

afterAll(async () => {
  for (const name of [...created, restored]) {
    await client
      .send(new UpdateTableCommand({ TableName: name, DeletionProtectionEnabled: false }))
      .catch(() => undefined);
    await client.send(new DeleteTableCommand({ TableName: name })).catch(() => undefined);
  }
  aws.dynamodb.destroy();
  aws.s3.destroy();
});

async function run(args: string[]) {
  const lines: string[] = [];
  const code = await runRestore(parseRestoreArgs(args), {
    client,
    out: (line) => lines.push(line),
    progress: { write: () => undefined },
    now: Date.now,
  });
  return { code, text: lines.join('\n') };
}

async function everyItem(table: string): Promise<string[]> {
  const all: string[] = [];
  for await (const page of scanItems(client, table)) all.push(...page.map(canonical));
  return all.sort();
}

describe('ops:restore on DynamoDB Local', () => {
  it('restores into a new table, re-applies what a restore drops, verifies, and says what could not run here', async () => {
    const out = await run(['--table', source, '--to', restored]);
    created.push(restored);
    expect(out.code).toBe(0);
    expect(out.text).toContain(
      `$ aws dynamodb restore-table-to-point-in-time --source-table-name ${source} --target-table-name ${restored} --use-latest-restorable-time`,
    );
    expect(out.text).toContain(
      'NOT RUN here: this endpoint has no point-in-time recovery: the items were copied as they are now; 250 items copied',
    );
    expect(out.text).toMatch(/stream +applied +NEW_AND_OLD_IMAGES/);
    expect(out.text).toMatch(/TTL +applied +expires_at/);
    expect(out.text).toMatch(
      /PITR +NOT RUN +not on this endpoint\n +\$ aws dynamodb update-continuous-backups --table-name \S+ --point-in-time-recovery-specification PointInTimeRecoveryEnabled=true/,
    );
    expect(out.text).toMatch(/deletion protection +applied +on/);
    expect(out.text).toMatch(/tags +NOT RUN +not on this endpoint\n +\$ aws dynamodb list-tags-of-resource/);
    expect(out.text).toMatch(/auto scaling +- +on-demand/);
    expect(out.text).toContain(`items: ${source} 250, ${restored} 250`);
    expect(out.text).toContain('sample of 200 items of');
    expect(out.text).toContain('200 equal, 0 differ, 0 missing');
    expect(out.text).toContain(`verified: ${restored} is ready`);
    expect(out.text).toContain(
      `b) copy back into ${source}, writers stopped: npm run ops:restore -- --copy-back --from ${restored} --table ${source}`,
    );

    // Read back, not from the tool: the new table is shaped and set like the source, and holds the same items, bit for bit.
    const t = (await client.send(new DescribeTableCommand({ TableName: restored }))).Table!;
    expect(t.StreamSpecification).toEqual({ StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' });
    expect(t.DeletionProtectionEnabled).toBe(true);
    expect(t.GlobalSecondaryIndexes!.map((g) => g.IndexName).sort()).toEqual(['GSI1', 'GSI2']);
    const ttl = (await client.send(new DescribeTimeToLiveCommand({ TableName: restored }))).TimeToLiveDescription;
    expect(ttl).toEqual({ TimeToLiveStatus: 'ENABLED', AttributeName: 'expires_at' });
    expect(await everyItem(restored)).toEqual(await everyItem(source));
  }, 120_000);

  it('refuses a target that exists, a time that is not UTC, and a missing half of the command', async () => {
    await expect(
      run(['--table', source, '--to', source.replace('drill', 'other'), '--method', 'pitr']),
    ).rejects.toMatchObject({
      name: 'UnknownOperationException',
    });
    await expect(run(['--table', restored, '--to', source])).rejects.toThrow(/exists already/);
    expect(() => parseRestoreArgs(['--table', 'abc', '--to', 'abd', '--time', '2026-12-06T02:00:00+01:00'])).toThrow(
      UsageError,
    );
    expect(() => parseRestoreArgs(['--table', 'abc'])).toThrow(UsageError);
    expect(() => parseRestoreArgs(['--copy-back', '--table', 'abc', '--to', 'abd'])).toThrow(UsageError);
  });

  it('cut-over (b): the copy back counts first, then makes the original hold exactly the restored items', async () => {
    // After the restore point: three items deleted, two changed, four added.
    for (const i of [1, 2, 3])
      await client.send(new DeleteItemCommand({ TableName: source, Key: { PK: item(i).PK, SK: item(i).SK } }));
    for (const i of [4, 5])
      await client.send(new PutItemCommand({ TableName: source, Item: { ...item(i), name: { S: 'changed' } } }));
    for (const i of [900, 901, 902, 903]) await client.send(new PutItemCommand({ TableName: source, Item: item(i) }));
    const before = await everyItem(source);

    const dry = await run(['--copy-back', '--from', restored, '--table', source]);
    expect(dry.code).toBe(0);
    expect(dry.text).toContain('has a stream (NEW_AND_OLD_IMAGES)');
    expect(dry.text).toContain('5 items would be put (missing or different), 4 would be deleted');
    expect(dry.text).toContain('nothing was written');
    expect(await everyItem(source)).toEqual(before);

    const real = await run(['--copy-back', '--from', restored, '--table', source, '--execute']);
    expect(real.text).toContain('5 items put (missing or different), 4 deleted');
    expect(await everyItem(source)).toEqual(await everyItem(restored));
    expect((await run(['--copy-back', '--from', restored, '--table', source])).text).toContain('0 items would be put');
    process.stdout.write(
      `[copy-back drill]\n$ ops:restore -- --copy-back …\n${dry.text}\n$ … --execute\n${real.text}\n`,
    );
  }, 120_000);

  it('the CLI, as an operator runs it on the local stack', async () => {
    const drill = `${source}-cli`;
    created.push(drill);
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'),
        'tools/ops/restore-table.ts',
        '--table',
        source,
        '--to',
        drill,
        '--sample',
        '50',
      ],
      { cwd: ROOT, env: process.env },
    );
    expect(stdout).toContain(`verified: ${drill} is ready`);
    process.stdout.write(`[restore drill]\n$ ops:restore -- --table ${source} --to ${drill} --sample 50\n${stdout}`);
  }, 120_000);
});
