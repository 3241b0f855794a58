import {
  CreateTableCommand,
  CreateTableCommandInput,
  DescribeContinuousBackupsCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  ListTagsOfResourceCommand,
  RestoreTableToPointInTimeCommand,
  TableDescription,
  Tag,
  TagResourceCommand,
  UpdateContinuousBackupsCommand,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { isoTime } from '../../lib/clock';
import { scanItems, writeAll } from './table-copy';

/**
 * A DynamoDB table restored into a NEW table, and made like its source
 * (docs/operations.md#restoring-a-table): RestoreTableToPointInTime, wait
 * ACTIVE, re-apply what a restore does not carry (the stream, TTL, PITR,
 * deletion protection, tags; auto scaling would be by hand, our tables are
 * on-demand), verify. An endpoint without PITR (DynamoDB Local) gets a copy
 * of the source's current items instead, and every step it cannot run is
 * reported with the AWS CLI command that runs it on AWS.
 */

export interface TableSettings {
  name: string;
  arn: string;
  create: Omit<CreateTableCommandInput, 'TableName'>;
  billing: 'PAY_PER_REQUEST' | 'PROVISIONED';
  stream?: string;
  ttlAttribute?: string;
  deletionProtection: boolean;
  pitr: { enabled: boolean; earliest?: string; latest?: string } | 'unsupported';
  tags: Tag[] | 'unsupported';
  sseKmsKeyArn?: string;
  keyNames: string[];
}

export type StepOutcome = 'applied' | 'already' | 'none' | 'unsupported' | 'by hand';
export interface StepReport {
  setting: string;
  outcome: StepOutcome;
  detail: string;
  /** The AWS CLI command of this step on AWS. */
  command?: string;
}

const unsupported = (err: unknown) => (err as { name?: string } | undefined)?.name === 'UnknownOperationException';

async function orUnsupported<T>(call: () => Promise<T>): Promise<T | 'unsupported'> {
  try {
    return await call();
  } catch (err) {
    if (unsupported(err)) return 'unsupported';
    throw err;
  }
}

export async function describeTable(client: DynamoDBClient, name: string): Promise<TableDescription | undefined> {
  try {
    return (await client.send(new DescribeTableCommand({ TableName: name }))).Table;
  } catch (err) {
    if ((err as { name?: string }).name === 'ResourceNotFoundException') return undefined;
    throw err;
  }
}

export async function tableSettings(client: DynamoDBClient, name: string): Promise<TableSettings> {
  const t = await describeTable(client, name);
  if (!t) throw new Error(`no table ${name}`);
  // DynamoDB Local omits the billing summary of an on-demand table and reports 0/0 throughput.
  const provisioned =
    t.BillingModeSummary?.BillingMode === 'PROVISIONED' || (t.ProvisionedThroughput?.ReadCapacityUnits ?? 0) > 0;
  const throughput = (p?: { ReadCapacityUnits?: number; WriteCapacityUnits?: number }) =>
    provisioned
      ? {
          ProvisionedThroughput: { ReadCapacityUnits: p?.ReadCapacityUnits, WriteCapacityUnits: p?.WriteCapacityUnits },
        }
      : {};
  const create: Omit<CreateTableCommandInput, 'TableName'> = {
    KeySchema: t.KeySchema,
    AttributeDefinitions: t.AttributeDefinitions,
    BillingMode: provisioned ? 'PROVISIONED' : 'PAY_PER_REQUEST',
    ...throughput(t.ProvisionedThroughput),
    ...(t.GlobalSecondaryIndexes?.length
      ? {
          GlobalSecondaryIndexes: t.GlobalSecondaryIndexes.map((g) => ({
            IndexName: g.IndexName,
            KeySchema: g.KeySchema,
            Projection: g.Projection,
            ...throughput(g.ProvisionedThroughput),
          })),
        }
      : {}),
    ...(t.LocalSecondaryIndexes?.length
      ? {
          LocalSecondaryIndexes: t.LocalSecondaryIndexes.map((l) => ({
            IndexName: l.IndexName,
            KeySchema: l.KeySchema,
            Projection: l.Projection,
          })),
        }
      : {}),
  };
  const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName: name }));
  const backups = await orUnsupported(() => client.send(new DescribeContinuousBackupsCommand({ TableName: name })));
  const tags = await orUnsupported(() => client.send(new ListTagsOfResourceCommand({ ResourceArn: t.TableArn })));
  const pitr =
    backups === 'unsupported' ? undefined : backups.ContinuousBackupsDescription?.PointInTimeRecoveryDescription;
  return {
    name,
    arn: t.TableArn!,
    create,
    billing: provisioned ? 'PROVISIONED' : 'PAY_PER_REQUEST',
    stream: t.StreamSpecification?.StreamEnabled ? t.StreamSpecification.StreamViewType : undefined,
    ttlAttribute:
      ttl.TimeToLiveDescription?.TimeToLiveStatus === 'ENABLED' ||
      ttl.TimeToLiveDescription?.TimeToLiveStatus === 'ENABLING'
        ? ttl.TimeToLiveDescription.AttributeName
        : undefined,
    deletionProtection: t.DeletionProtectionEnabled === true,
    pitr:
      backups === 'unsupported'
        ? 'unsupported'
        : {
            enabled: pitr?.PointInTimeRecoveryStatus === 'ENABLED',
            earliest: pitr?.EarliestRestorableDateTime?.toISOString(),
            latest: pitr?.LatestRestorableDateTime?.toISOString(),
          },
    tags: tags === 'unsupported' ? 'unsupported' : (tags.Tags ?? []),
    sseKmsKeyArn: t.SSEDescription?.SSEType === 'KMS' ? t.SSEDescription.KMSMasterKeyArn : undefined,
    keyNames: (t.KeySchema ?? []).map((k) => k.AttributeName!),
  };
}

export function restoreCommand(source: string, target: string, time?: number): string {
  const when = time === undefined ? '--use-latest-restorable-time' : `--restore-date-time ${isoTime(time)}`;
  return `aws dynamodb restore-table-to-point-in-time --source-table-name ${source} --target-table-name ${target} ${when} --billing-mode-override PAY_PER_REQUEST`;
}

/**
 * The restore itself: PITR where the endpoint has it; with `auto`, an endpoint
 * without it (DynamoDB Local) gets a table of the same shape and a copy of the
 * source's items as they are now (a scan: not one point in time).
 */
export async function restoreInto(
  client: DynamoDBClient,
  source: TableSettings,
  target: string,
  options: { time?: number; method: 'auto' | 'pitr' | 'copy'; onCopied?: (items: number) => void },
): Promise<{ method: 'pitr' | 'copy'; note?: string; copied?: number }> {
  if (options.method !== 'copy') {
    try {
      await client.send(
        new RestoreTableToPointInTimeCommand({
          SourceTableName: source.name,
          TargetTableName: target,
          ...(options.time === undefined
            ? { UseLatestRestorableTime: true }
            : { RestoreDateTime: new Date(options.time) }),
          BillingModeOverride: source.billing,
          // A customer-managed key is kept; otherwise the restore uses DynamoDB's default, as the source does.
          ...(source.sseKmsKeyArn
            ? { SSESpecificationOverride: { Enabled: true, SSEType: 'KMS', KMSMasterKeyId: source.sseKmsKeyArn } }
            : {}),
        }),
      );
      return { method: 'pitr' };
    } catch (err) {
      if (!(unsupported(err) && options.method === 'auto')) throw err;
    }
  }
  await client.send(new CreateTableCommand({ ...source.create, TableName: target }));
  await waitActive(client, target, 120_000);
  let copied = 0;
  for await (const page of scanItems(client, source.name)) {
    await writeAll(
      client,
      target,
      page.map((Item) => ({ PutRequest: { Item } })),
    );
    copied += page.length;
    options.onCopied?.(copied);
  }
  return {
    method: 'copy',
    copied,
    note:
      options.time === undefined
        ? 'this endpoint has no point-in-time recovery: the items were copied as they are now'
        : `this endpoint has no point-in-time recovery: the items were copied as they are now, NOT as at ${isoTime(options.time)}`,
  };
}

/** Until the table and every index are ACTIVE. */
export async function waitActive(
  client: DynamoDBClient,
  name: string,
  timeoutMs: number,
  pollMs = 2000,
): Promise<number> {
  const began = Date.now();
  for (;;) {
    const t = await describeTable(client, name);
    if (t?.TableStatus === 'ACTIVE' && (t.GlobalSecondaryIndexes ?? []).every((g) => g.IndexStatus === 'ACTIVE'))
      return Date.now() - began;
    if (Date.now() - began > timeoutMs)
      throw new Error(`${name} not ACTIVE after ${Math.round(timeoutMs / 60_000)} min (${t?.TableStatus ?? 'absent'})`);
    await sleep(Math.min(pollMs, 250 + (Date.now() - began) / 10));
  }
}

/** What a restore leaves behind, put back from the source's settings, one step at a time. */
export async function reapplySettings(
  client: DynamoDBClient,
  source: TableSettings,
  target: string,
): Promise<StepReport[]> {
  const reports: StepReport[] = [];
  const t = (await describeTable(client, target))!;

  const streamCmd = `aws dynamodb update-table --table-name ${target} --stream-specification StreamEnabled=true,StreamViewType=${source.stream}`;
  if (!source.stream) reports.push({ setting: 'stream', outcome: 'none', detail: 'the source has none' });
  else if (t.StreamSpecification?.StreamEnabled && t.StreamSpecification.StreamViewType === source.stream)
    reports.push({ setting: 'stream', outcome: 'already', detail: source.stream, command: streamCmd });
  else {
    await client.send(
      new UpdateTableCommand({
        TableName: target,
        StreamSpecification: { StreamEnabled: true, StreamViewType: source.stream as 'NEW_AND_OLD_IMAGES' },
      }),
    );
    await waitActive(client, target, 600_000);
    reports.push({
      setting: 'stream',
      outcome: 'applied',
      detail: `${source.stream} (a new stream ARN)`,
      command: streamCmd,
    });
  }

  const ttlCmd = `aws dynamodb update-time-to-live --table-name ${target} --time-to-live-specification Enabled=true,AttributeName=${source.ttlAttribute}`;
  if (!source.ttlAttribute) reports.push({ setting: 'TTL', outcome: 'none', detail: 'off on the source' });
  else {
    const ttl = (await client.send(new DescribeTimeToLiveCommand({ TableName: target }))).TimeToLiveDescription;
    if (ttl?.TimeToLiveStatus === 'ENABLED' && ttl.AttributeName === source.ttlAttribute)
      reports.push({ setting: 'TTL', outcome: 'already', detail: source.ttlAttribute, command: ttlCmd });
    else {
      await client.send(
        new UpdateTimeToLiveCommand({
          TableName: target,
          TimeToLiveSpecification: { Enabled: true, AttributeName: source.ttlAttribute },
        }),
      );
      reports.push({ setting: 'TTL', outcome: 'applied', detail: source.ttlAttribute, command: ttlCmd });
    }
  }

  const pitrCmd = `aws dynamodb update-continuous-backups --table-name ${target} --point-in-time-recovery-specification PointInTimeRecoveryEnabled=true`;
  if (source.pitr !== 'unsupported' && !source.pitr.enabled)
    reports.push({ setting: 'PITR', outcome: 'none', detail: 'off on the source' });
  else {
    const done = await orUnsupported(() =>
      client.send(
        new UpdateContinuousBackupsCommand({
          TableName: target,
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        }),
      ),
    );
    reports.push(
      done === 'unsupported'
        ? { setting: 'PITR', outcome: 'unsupported', detail: 'not on this endpoint', command: pitrCmd }
        : { setting: 'PITR', outcome: 'applied', detail: 'enabled (its 35-day window starts now)', command: pitrCmd },
    );
  }

  const protectCmd = `aws dynamodb update-table --table-name ${target} --deletion-protection-enabled`;
  if (!source.deletionProtection)
    reports.push({ setting: 'deletion protection', outcome: 'none', detail: 'off on the source' });
  else if (t.DeletionProtectionEnabled)
    reports.push({ setting: 'deletion protection', outcome: 'already', detail: 'on', command: protectCmd });
  else {
    await client.send(new UpdateTableCommand({ TableName: target, DeletionProtectionEnabled: true }));
    await waitActive(client, target, 600_000);
    reports.push({ setting: 'deletion protection', outcome: 'applied', detail: 'on', command: protectCmd });
  }

  if (source.tags === 'unsupported')
    reports.push({
      setting: 'tags',
      outcome: 'unsupported',
      detail: 'not on this endpoint',
      command: `aws dynamodb list-tags-of-resource --resource-arn ${source.arn}, then aws dynamodb tag-resource --resource-arn ${t.TableArn} --tags Key=…,Value=…`,
    });
  else if (source.tags.length === 0) reports.push({ setting: 'tags', outcome: 'none', detail: 'the source has none' });
  else {
    const tagCmd = `aws dynamodb tag-resource --resource-arn ${t.TableArn} --tags ${source.tags.map((g) => `Key=${g.Key},Value=${g.Value}`).join(' ')}`;
    const done = await orUnsupported(() =>
      client.send(new TagResourceCommand({ ResourceArn: t.TableArn, Tags: source.tags as Tag[] })),
    );
    reports.push(
      done === 'unsupported'
        ? { setting: 'tags', outcome: 'unsupported', detail: 'not on this endpoint', command: tagCmd }
        : { setting: 'tags', outcome: 'applied', detail: `${source.tags.length} tags`, command: tagCmd },
    );
  }

  reports.push(
    source.billing === 'PAY_PER_REQUEST'
      ? { setting: 'auto scaling', outcome: 'none', detail: 'on-demand (PAY_PER_REQUEST): nothing scales' }
      : {
          setting: 'auto scaling',
          outcome: 'by hand',
          detail: 'provisioned capacity: copy the scalable targets and policies',
          command: `aws application-autoscaling describe-scalable-targets --service-namespace dynamodb --resource-ids table/${source.name}, then register-scalable-target and put-scaling-policy for table/${target}`,
        },
  );
  return reports;
}
