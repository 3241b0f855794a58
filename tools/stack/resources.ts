import {
  CreateTableCommand,
  CreateTableCommandInput,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  ResourceInUseException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';

/**
 * Local bootstrap of the resources that serverless.yml defines ONCE as
 * CloudFormation, so there is no second hand-written copy. `planResources` turns the resolved template into
 * SDK calls; `applyResources` makes them idempotently. No second hand-written
 * copy of any table or bucket exists.
 */

export interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
}

export interface TablePlan {
  logicalId: string;
  create: CreateTableCommandInput;
  ttlAttribute?: string;
}

export interface ResourcePlan {
  tables: TablePlan[];
  buckets: { logicalId: string; name: string }[];
  /** Resources a local stack has no use for (IAM roles, alarms...), by logical id. */
  ignored: string[];
}

// CloudFormation properties that map 1:1 onto CreateTable's input.
const TABLE_PROPERTIES = [
  'TableName',
  'AttributeDefinitions',
  'KeySchema',
  'BillingMode',
  'ProvisionedThroughput',
  'GlobalSecondaryIndexes',
  'LocalSecondaryIndexes',
  'StreamSpecification',
] as const;

// Properties that matter on AWS but have no local meaning; anything outside both lists fails loudly.
const TABLE_PROPERTIES_AWS_ONLY = [
  'TimeToLiveSpecification',
  'PointInTimeRecoverySpecification',
  'SSESpecification',
  'Tags',
  'DeletionProtectionEnabled',
  'TableClass',
  'ContributorInsightsSpecification',
];

export class UnsupportedResourceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsupportedResourceError';
  }
}

export function planResources(resources: Record<string, CfnResource>): ResourcePlan {
  const plan: ResourcePlan = { tables: [], buckets: [], ignored: [] };
  for (const [logicalId, resource] of Object.entries(resources)) {
    const props = resource.Properties ?? {};
    switch (resource.Type) {
      case 'AWS::DynamoDB::Table':
        plan.tables.push(planTable(logicalId, props));
        break;
      case 'AWS::S3::Bucket':
        if (typeof props.BucketName !== 'string') {
          throw new UnsupportedResourceError(`${logicalId}: BucketName must be a literal string for the local stack`);
        }
        plan.buckets.push({ logicalId, name: props.BucketName });
        break;
      default:
        plan.ignored.push(logicalId);
    }
  }
  return plan;
}

function planTable(logicalId: string, props: Record<string, unknown>): TablePlan {
  const unknown = Object.keys(props).filter(
    (k) => !(TABLE_PROPERTIES as readonly string[]).includes(k) && !TABLE_PROPERTIES_AWS_ONLY.includes(k),
  );
  if (unknown.length > 0) {
    throw new UnsupportedResourceError(`${logicalId}: properties not supported locally: ${unknown.join(', ')}`);
  }
  if (typeof props.TableName !== 'string') {
    throw new UnsupportedResourceError(`${logicalId}: TableName must be a literal string for the local stack`);
  }
  const create: Record<string, unknown> = {};
  for (const key of TABLE_PROPERTIES) if (props[key] !== undefined) create[key] = props[key];
  // CloudFormation says only the view type; CreateTable also wants the switch.
  const stream = props.StreamSpecification as { StreamViewType?: string } | undefined;
  if (stream) create.StreamSpecification = { StreamEnabled: true, StreamViewType: stream.StreamViewType };
  const ttl = props.TimeToLiveSpecification as { AttributeName?: string; Enabled?: boolean } | undefined;
  return {
    logicalId,
    create: create as unknown as CreateTableCommandInput,
    ttlAttribute: ttl?.Enabled ? ttl.AttributeName : undefined,
  };
}

export interface ApplyResult {
  created: string[];
  existing: string[];
}

export async function applyResources(
  plan: ResourcePlan,
  clients: { dynamodb: DynamoDBClient; s3: S3Client },
): Promise<ApplyResult> {
  const result: ApplyResult = { created: [], existing: [] };
  const note = (created: boolean, name: string) => (created ? result.created : result.existing).push(name);

  await Promise.all([
    ...plan.tables.map(async (table) => {
      note(await createTable(clients.dynamodb, table), `table ${table.create.TableName}`);
    }),
    ...plan.buckets.map(async (bucket) => {
      note(await createBucket(clients.s3, bucket.name), `bucket ${bucket.name}`);
    }),
  ]);
  return result;
}

async function createTable(dynamodb: DynamoDBClient, table: TablePlan): Promise<boolean> {
  let created = true;
  try {
    await dynamodb.send(new CreateTableCommand(table.create));
  } catch (err) {
    if (!(err instanceof ResourceInUseException)) throw err;
    created = false;
  }
  // A table kept from a run before its stream was declared (STACK_DATA_DIR) gets the stream now.
  const stream = table.create.StreamSpecification;
  if (!created && stream?.StreamEnabled) {
    const current = await dynamodb.send(new DescribeTableCommand({ TableName: table.create.TableName }));
    if (!current.Table?.StreamSpecification?.StreamEnabled) {
      await dynamodb.send(new UpdateTableCommand({ TableName: table.create.TableName, StreamSpecification: stream }));
    }
  }
  // A table kept from a run before one of its indexes was declared (e.g. the sync table's DUE) gets it now.
  const indexes = table.create.GlobalSecondaryIndexes ?? [];
  if (!created && indexes.length) {
    const current = await dynamodb.send(new DescribeTableCommand({ TableName: table.create.TableName }));
    const present = new Set((current.Table?.GlobalSecondaryIndexes ?? []).map((i) => i.IndexName));
    for (const index of indexes.filter((i) => !present.has(i.IndexName))) {
      await dynamodb.send(
        new UpdateTableCommand({
          TableName: table.create.TableName,
          AttributeDefinitions: table.create.AttributeDefinitions,
          GlobalSecondaryIndexUpdates: [
            { Create: { IndexName: index.IndexName, KeySchema: index.KeySchema, Projection: index.Projection } },
          ],
        }),
      );
    }
  }
  if (table.ttlAttribute) {
    const current = await dynamodb.send(new DescribeTimeToLiveCommand({ TableName: table.create.TableName }));
    if (current.TimeToLiveDescription?.AttributeName !== table.ttlAttribute) {
      await dynamodb.send(
        new UpdateTimeToLiveCommand({
          TableName: table.create.TableName,
          TimeToLiveSpecification: { AttributeName: table.ttlAttribute, Enabled: true },
        }),
      );
    }
  }
  return created;
}

async function createBucket(s3: S3Client, name: string): Promise<boolean> {
  try {
    await s3.send(new CreateBucketCommand({ Bucket: name }));
    return true;
  } catch (err) {
    if (err instanceof S3ServiceException && ['BucketAlreadyOwnedByYou', 'BucketAlreadyExists'].includes(err.name)) {
      return false;
    }
    throw err;
  }
}
