import { CreateTableCommand, DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { InvokeCommand, type InvokeCommandOutput, LambdaClient } from '@aws-sdk/client-lambda';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createAwsClients, AwsClients, TOOL_DYNAMODB_LIMITS } from '../../lib/aws/clients';
import { planResources } from '../../tools/stack/resources';
import type { ServiceDefinition } from '../../tools/stack/definition';
import { Config, loadConfig } from '../../lib/config';
import { loadTokenSealing } from '../../lib/sync/config';
import { SecretSealer } from '../../lib/secrets/sealer';
import type { TokenSealer } from '../../lib/secrets/token-sealer';
import { connect, NatsConnection } from 'nats';
import { natsOptions } from '../../lib/nats/connection';

/** What a test needs to talk to the run's stack. */
export function stackConfig(): Config {
  return loadConfig(process.env);
}

export function stackClients(): AwsClients {
  return createAwsClients(stackConfig(), TOOL_DYNAMODB_LIMITS);
}

/** A NATS connection to the run's server, logged in as the functions are. */
export function stackNats(name = 'test'): Promise<NatsConnection> {
  return connect(natsOptions(stackConfig().nats, name));
}

/** The run's keyring for brokerage tokens, as the sync functions use it (the stack has no KMS). */
export function stackSealer(): () => Promise<TokenSealer> {
  const sealer = new SecretSealer(loadTokenSealing(process.env).keyring!);
  return async () => sealer;
}

export function httpUrl(path: string): string {
  const base = process.env.TEST_HTTP_URL;
  if (!base) throw new Error('TEST_HTTP_URL is not set: run this test in the jest `stack` project');
  return base + path;
}

/** serverless.yml as the run's stack resolved it. */
export function stackDefinition(): ServiceDefinition {
  return JSON.parse(fs.readFileSync(path.join(process.env.TEST_STATE_DIR!, 'definition.json'), 'utf8'));
}

/**
 * A private copy of one of the template's tables (same keys and indexes, its
 * own name), for tests whose subject scans a whole table (the tick walks every
 * connection) and so must not share one with other test files.
 */
export async function isolatedTable(
  aws: AwsClients,
  logicalId: string,
): Promise<{ name: string; drop: () => Promise<void> }> {
  const table = planResources(stackDefinition().resources.Resources).tables.find((t) => t.logicalId === logicalId);
  if (!table) throw new Error(`no table ${logicalId} in serverless.yml`);
  const name = `${table.create.TableName}-${process.pid}-${Date.now()}`;
  // No stream on a private copy: nothing consumes it, and DynamoDB Local keeps every stream record in memory
  // (a 10,000-row import into a streamed copy slowed every later test).
  const { StreamSpecification: _unused, ...create } = table.create;
  await aws.dynamodb.send(new CreateTableCommand({ ...create, TableName: name }));
  return { name, drop: async () => void (await aws.dynamodb.send(new DeleteTableCommand({ TableName: name }))) };
}

/**
 * Invokes a scheduled function of the test stack through offline's Lambda port with an
 * EventBridge-shaped event, as its schedule would (tests drive every tick themselves).
 */
export async function invokeScheduled(functionKey: string): Promise<InvokeCommandOutput> {
  const lambda = new LambdaClient({ endpoint: process.env.TEST_LAMBDA_URL, region: 'us-east-1' });
  const scheduled = {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    time: new Date().toISOString(),
    detail: {},
  };
  try {
    return await lambda.send(
      new InvokeCommand({
        FunctionName: `torrent-scan-sync-test-${functionKey}`,
        Payload: new TextEncoder().encode(JSON.stringify(scheduled)),
      }),
    );
  } finally {
    lambda.destroy();
  }
}
