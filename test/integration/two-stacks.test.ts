import path from 'node:path';
import { CreateTableCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { connect, NatsConnection } from 'nats';
import { freePort, listeners, processGroup } from '../../tools/stack/ports';
import { startStack, Stack } from '../../tools/stack/stack';
import { ROOT } from '../support/globalSetup';

/**
 * Two stacks on one machine never share a dependency (issue 44): two stacks
 * started at the same moment prefer the same ports, as a developer's
 * `npm start` and a test run (or two checkouts) do. Each ends with its own
 * DynamoDB Local, S3 and nats-server, each port held by its own process, and
 * neither sees the other's data. The emulators and offline start through the
 * same checked `startProcess` (test/integration/stack-supervisor.test.ts).
 */

const region = 'us-east-1';
const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

describe('two stacks started at once', () => {
  let stacks: Stack[] = [];

  beforeAll(async () => {
    const preferredPorts = { dynamodb: await freePort(), s3: await freePort(), nats: await freePort() };
    // Each stack's first check of a preferred port says "free" even when the other stack just took it: the
    // race two processes lose for real (both check, then both bind). Later picks check for real.
    const lostRace = () => {
      const tried = new Set<number>();
      return async (preferred?: number) =>
        preferred !== undefined && !tried.has(preferred) ? (tried.add(preferred), preferred) : freePort(preferred);
    };
    const settled = await Promise.allSettled(
      ['a', 'b'].map((name) =>
        startStack({
          root: ROOT,
          stateDir: path.join(process.env.TEST_STATE_DIR!, `two-stacks-${name}`),
          stage: 'test',
          preferredPorts,
          pickPort: lostRace(),
          offline: false,
          emulators: false,
        }),
      ),
    );
    stacks = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
  }, 120_000);
  afterAll(async () => {
    for (const stack of stacks) await stack.stop();
  });

  const port = (url: string) => Number(new URL(url).port);

  it('each service listens on a port of its own, held by its own process', () => {
    const [a, b] = stacks;
    for (const name of ['dynamodb-local', 's3rver', 'nats-server']) {
      const [mine, theirs] = [a, b].map((s) => s.services.find((x) => x.name === name)!);
      expect(port(mine.url)).not.toBe(port(theirs.url));
      for (const service of [mine, theirs]) {
        const held = listeners(port(service.url))!;
        expect(held.length).toBeGreaterThan(0);
        for (const l of held) expect(processGroup(l.pid!)).toBe(service.pid);
      }
    }
  });

  it("each stack's DynamoDB and S3 hold only its own data", async () => {
    const [a, b] = stacks.map((s) => ({
      env: s.env,
      dynamodb: new DynamoDBClient({ region, credentials, endpoint: s.env.AWS_ENDPOINT_URL_DYNAMODB }),
      s3: new S3Client({ region, credentials, endpoint: s.env.AWS_ENDPOINT_URL_S3, forcePathStyle: true }),
    }));
    try {
      await a.dynamodb.send(
        new CreateTableCommand({
          TableName: 'only-in-a',
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
          BillingMode: 'PAY_PER_REQUEST',
        }),
      );
      const tables = async (c: DynamoDBClient) => (await c.send(new ListTablesCommand({}))).TableNames ?? [];
      expect(await tables(a.dynamodb)).toContain('only-in-a');
      expect(await tables(b.dynamodb)).not.toContain('only-in-a');
      // Both bootstrapped the same template: the same table names, in two databases.
      expect(await tables(b.dynamodb)).toContain(b.env.TABLE_SCAN);

      const object = { Bucket: a.env.BUCKET_FILES, Key: 'two-stacks/only-in-a.txt' };
      await a.s3.send(new PutObjectCommand({ ...object, Body: 'a' }));
      await expect(a.s3.send(new HeadObjectCommand(object))).resolves.toBeDefined();
      await expect(b.s3.send(new HeadObjectCommand(object))).rejects.toMatchObject({
        $metadata: { httpStatusCode: 404 },
      });
    } finally {
      for (const side of [a, b]) {
        side.dynamodb.destroy();
        side.s3.destroy();
      }
    }
  });

  it("each nats-server carries only its own stack's messages and logins", async () => {
    const [a, b] = stacks;
    const login = (s: Stack, url = s.env.NATS_URL) =>
      connect({ servers: url, user: s.env.NATS_USER, pass: s.env.NATS_PASSWORD, timeout: 2000 });
    const open: NatsConnection[] = [];
    try {
      const [pubA, subA, subB] = await Promise.all([login(a), login(a), login(b)]);
      open.push(pubA, subA, subB);
      const got = { a: 0, b: 0 };
      subA.subscribe('two.stacks', { callback: () => got.a++ });
      subB.subscribe('two.stacks', { callback: () => got.b++ });
      await Promise.all([subA.flush(), subB.flush()]);
      pubA.publish('two.stacks', 'hello');
      await pubA.flush();
      await new Promise((r) => setTimeout(r, 300));
      expect(got).toEqual({ a: 1, b: 0 });
      // Each server asks for its own stack's login: a's is refused by b's.
      await expect(login(a, b.env.NATS_URL)).rejects.toThrow(/Authorization/i);
    } finally {
      await Promise.all(open.map((c) => c.close()));
    }
  });
});
