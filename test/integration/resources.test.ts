import {
  ConditionalCheckFailedException,
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import { HeadBucketCommand } from '@aws-sdk/client-s3';
import path from 'node:path';
import { loadServiceDefinition } from '../../tools/stack/definition';
import { bootstrapResources } from '../../tools/stack/stack';
import { applyResources, planResources } from '../../tools/stack/resources';
import { newId } from '../../lib/ident';
import { stackClients, stackConfig } from '../support/stack';

const ROOT = path.resolve(__dirname, '..', '..');

describe('resources bootstrapped from serverless.yml', () => {
  const aws = stackClients();
  const cfg = stackConfig();
  afterAll(() => {
    aws.dynamodb.destroy();
    aws.s3.destroy();
  });

  it('created the table exactly as the template defines it', async () => {
    const definition = await loadServiceDefinition(ROOT, process.env, 'test');
    const template = definition.resources.Resources.DownloadsTable.Properties!;
    const { Table } = await aws.dynamodb.send(new DescribeTableCommand({ TableName: cfg.tables.downloads }));
    expect(Table?.TableName).toBe(template.TableName);
    expect(Table?.KeySchema).toEqual(template.KeySchema);
    expect(Table?.AttributeDefinitions).toEqual(expect.arrayContaining(template.AttributeDefinitions as unknown[]));
    await expect(aws.s3.send(new HeadBucketCommand({ Bucket: cfg.buckets.files }))).resolves.toBeDefined();

    // The bootstrap is idempotent: a second run creates nothing and fails on nothing.
    const again = await bootstrapResources(definition, process.env as Record<string, string>);
    const plan = planResources(definition.resources.Resources);
    expect(again.created).toEqual([]);
    expect(again.existing.sort()).toEqual(
      [...plan.buckets.map((b) => `bucket ${b.name}`), ...plan.tables.map((t) => `table ${t.create.TableName}`)].sort(),
    );
    expect(plan.tables.length).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it('gives a table kept from an earlier run the indexes declared since (the sync table’s DUE and ATTEMPTS)', async () => {
    const definition = await loadServiceDefinition(ROOT, process.env, 'test');
    const sync = planResources(definition.resources.Resources).tables.find((t) => t.logicalId === 'SyncTable')!;
    const TableName = `${sync.create.TableName}-kept-${newId()}`;
    const { GlobalSecondaryIndexes: _declared, ...withoutIndexes } = sync.create;
    await aws.dynamodb.send(
      new CreateTableCommand({
        ...withoutIndexes,
        TableName,
        AttributeDefinitions: [
          { AttributeName: 'PK', AttributeType: 'S' },
          { AttributeName: 'SK', AttributeType: 'S' },
        ],
      }),
    );
    try {
      const result = await applyResources(
        { tables: [{ ...sync, create: { ...sync.create, TableName } }], buckets: [], ignored: [] },
        { dynamodb: aws.dynamodb, s3: aws.s3 },
      );
      expect(result.existing).toEqual([`table ${TableName}`]);
      const { Table } = await aws.dynamodb.send(new DescribeTableCommand({ TableName }));
      expect(Table?.GlobalSecondaryIndexes?.map((i) => i.IndexName).sort()).toEqual(['ATTEMPTS', 'DUE']);
    } finally {
      await aws.dynamodb.send(new DeleteTableCommand({ TableName }));
    }
  });

  it('enforces a conditional write: of racing attribute_not_exists puts exactly one wins', async () => {
    const pk = `TEST#${newId()}`;
    const put = (writer: number) =>
      aws.dynamodb.send(
        new PutItemCommand({
          TableName: cfg.tables.downloads,
          Item: { PK: { S: pk }, SK: { S: 'GUARD' }, writer: { N: String(writer) } },
          ConditionExpression: 'attribute_not_exists(PK)',
        }),
      );
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => put(i)));
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(19);
    for (const r of lost) expect(r.reason).toBeInstanceOf(ConditionalCheckFailedException);
  });
});
