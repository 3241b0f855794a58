import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { NatsConnection, Subscription } from 'nats';
import { createSqsClient, lambdaAsyncInvoke, sqsFailureQueue } from '../../../tools/ops/aws';
import { DynamoReplayMarkers } from '../../../tools/ops/replay-markers';
import { parseReplayArgs, ReplayRunDeps, runReplay } from '../../../tools/ops/replay-failures';
import type { FailureQueue, Invoke } from '../../../tools/ops/replay';
import { REPLAYABLE_FUNCTIONS, type ReplayTrust } from '../../../tools/ops/trust';
import { Moto, startMoto } from '../../support/moto';
import { stackClients, stackConfig, stackNats } from '../../support/stack';

/**
 * The failure-queue replay against real services: moto's SQS as the
 * async-failure queue, serverless offline's Lambda endpoint running the real
 * `natsPing` (every invocation answers once on the reply subject its payload
 * names, so the replies count the invocations), the markers in DynamoDB Local.
 * Lambda's on-failure destination does not exist under offline: the records
 * are written here in the documented shape Lambda gives them.
 */

const ROOT = path.resolve(__dirname, '../../..');
const REGION = 'us-east-1';
const PREFIX = 'torrent-scan-sync-test-';
// moto's default account: its queue URLs name it, and Lambda's records of this stage's functions name it too.
const ACCOUNT = '123456789012';
const TRUST: ReplayTrust = {
  region: REGION,
  account: ACCOUNT,
  functionPrefix: PREFIX,
  functions: REPLAYABLE_FUNCTIONS,
};
const aws = stackClients();
const markers = new DynamoReplayMarkers({ documents: aws.documents, table: stackConfig().tables.downloads });
const lambda = lambdaAsyncInvoke(REGION);
let moto: Moto;
let sqs: SQSClient;
let nc: NatsConnection;
let inbox: string;
let sub: Subscription;
/** Echo text → how many natsPing invocations answered with it. */
const replies = new Map<string, number>();

beforeAll(async () => {
  moto = await startMoto({ dir: path.join(process.env.TEST_STATE_DIR!, 'logs') });
  // The tool's own client, its endpoint read by the SDK as the CLI's is (this file's environment only).
  process.env.AWS_ENDPOINT_URL_SQS = moto.endpoint;
  sqs = createSqsClient(REGION);
  nc = await stackNats('replay-test');
  inbox = `_INBOX.replay.${randomUUID()}`;
  sub = nc.subscribe(inbox, {
    callback: (_err, msg) => {
      const echo = (JSON.parse(new TextDecoder().decode(msg.data)) as { echo: string }).echo;
      replies.set(echo, (replies.get(echo) ?? 0) + 1);
    },
  });
}, 60_000);

afterAll(async () => {
  sub?.unsubscribe();
  await nc?.drain();
  lambda.close();
  aws.dynamodb.destroy();
  sqs?.destroy();
  await moto?.stop();
});

/** A record as Lambda's on-failure destination writes it (docs: "Capturing records of asynchronous invocations"). */
function asyncRecord(fn: string, payload: unknown, failedAgoMs = 3_600_000): string {
  return JSON.stringify({
    version: '1.0',
    timestamp: new Date(Date.now() - failedAgoMs).toISOString(),
    requestContext: {
      requestId: randomUUID(),
      functionArn: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${fn}:$LATEST`,
      condition: 'RetriesExhausted',
      approximateInvokeCount: 3,
    },
    requestPayload: payload,
    responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
    responsePayload: { errorType: 'NatsError', errorMessage: 'CONNECTION_REFUSED', trace: [] },
  });
}

/** A stream mapping's record: the batch's place in the stream, not the batch. */
function streamRecord(arrivedAgoMs: number): string {
  const arrived = new Date(Date.now() - arrivedAgoMs).toISOString();
  return JSON.stringify({
    requestContext: {
      requestId: randomUUID(),
      functionArn: `arn:aws:lambda:${REGION}:123456789012:function:${PREFIX}telegramNotify`,
      condition: 'RetryAttemptsExhausted',
      approximateInvokeCount: 10001,
    },
    responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
    version: '1.0',
    timestamp: new Date().toISOString(),
    DDBStreamBatchInfo: {
      shardId: 'shardId-00000001733450000000-aaaabbbb',
      startSequenceNumber: '800000000003126276362',
      endSequenceNumber: '800000000003126276400',
      approximateArrivalOfFirstRecord: arrived,
      approximateArrivalOfLastRecord: arrived,
      batchSize: 39,
      streamArn: `arn:aws:dynamodb:${REGION}:123456789012:table/${PREFIX}downloads/stream/2026-12-01T00:00:00.000`,
    },
  });
}

const ping = (echo: string) => ({ source: 'nats', subject: 'health.ping', reply: inbox, headers: {}, data: echo });

async function newQueue(): Promise<{ url: string; queue: FailureQueue }> {
  const { QueueUrl } = await sqs.send(
    new CreateQueueCommand({ QueueName: `${PREFIX}async-failures-${randomUUID().slice(0, 8)}` }),
  );
  return { url: QueueUrl!, queue: sqsFailureQueue(sqs, QueueUrl!) };
}

/** A record put on the queue as Lambda's on-failure destination sends it; its message id. */
async function send(url: string, body: string): Promise<string> {
  return (await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body }))).MessageId!;
}

async function run(queue: FailureQueue, args: string[], overrides: Partial<ReplayRunDeps> = {}) {
  const lines: string[] = [];
  const code = await runReplay(parseReplayArgs(args), {
    queue,
    queueName: 'async-failures',
    invoke: lambda.invoke,
    markers,
    functionPrefix: PREFIX,
    trust: TRUST,
    runId: randomUUID(),
    now: Date.now,
    out: (line) => lines.push(line),
    progress: { write: () => undefined },
    ...overrides,
  });
  return { code, lines, text: lines.join('\n') };
}

/** Waits for `count` invocations answering `echo`, then a while longer: a second invocation would show by then. */
async function invocations(echo: string, count: number): Promise<number> {
  const until = Date.now() + 15_000;
  while ((replies.get(echo) ?? 0) < count && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
  await new Promise((r) => setTimeout(r, 1500));
  return replies.get(echo) ?? 0;
}

async function visibleIds(url: string): Promise<string[]> {
  const { Messages = [] } = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, VisibilityTimeout: 0, WaitTimeSeconds: 0 }),
  );
  return Messages.map((m) => m.MessageId!).sort();
}

describe('ops:replay-failures', () => {
  it('lists each record with its function, condition, age and attempts; a dry run changes nothing', async () => {
    const { url, queue } = await newQueue();
    const echo = randomUUID();
    const a = await send(url, asyncRecord(`${PREFIX}natsPing`, ping(echo)));
    const s = await send(url, streamRecord(30 * 3_600_000));
    const u = await send(url, 'not json at all');

    const listed = await run(queue, []);
    expect(listed.code).toBe(0);
    expect(listed.text).toMatch(
      new RegExp(`${a} natsPing +async +RetriesExhausted +age 1 h 0 min +attempts 3  NatsError: CONNECTION_REFUSED`),
    );
    expect(listed.text).toMatch(
      new RegExp(
        `${s} telegramNotify +stream +RetryAttemptsExhausted .*attempts 10001  stream batch \\(shardId-\\S+ 800000000003126276362\\.\\.800000000003126276400, 39 records, expired from the stream at `,
      ),
    );
    expect(listed.text).toMatch(new RegExp(`${u} \\(unreadable\\) .*not JSON`));

    const dry = await run(queue, ['--all']);
    expect(dry.code).toBe(0);
    expect(dry.text).toContain('dry run: would replay 3:');
    expect(dry.text).toContain(`${a} invoke ${PREFIX}natsPing (Event) with the original payload`);
    expect(dry.text).toMatch(new RegExp(`${s} skip: stream batch`));
    expect(dry.text).toContain('nothing was changed');
    // Nothing invoked, nothing claimed, every record visible again at once.
    expect(await invocations(echo, 0)).toBe(0);
    expect(await markers.get(a)).toBeUndefined();
    expect(await visibleIds(url)).toEqual([a, s, u].sort());
  });

  it('replays a record exactly once: invoked with its payload, marked, deleted; a second run finds nothing', async () => {
    const { url, queue } = await newQueue();
    const echo = randomUUID();
    const id = await send(url, asyncRecord(`${PREFIX}natsPing`, ping(echo)));

    const first = await run(queue, ['--function', 'natsPing', '--execute']);
    expect(first.code).toBe(0);
    expect(first.text).toMatch(new RegExp(`replayed +${id} natsPing accepted by Lambda.*record deleted`));
    expect(await invocations(echo, 1)).toBe(1);
    expect(await markers.get(id)).toMatchObject({ state: 'invoked', function_name: `${PREFIX}natsPing` });
    expect(await visibleIds(url)).toEqual([]);

    const again = await run(queue, ['--all', '--execute']);
    expect(again.text).toContain('async-failures: 0 records');
    expect(await invocations(echo, 1)).toBe(1);
  });

  it('killed after Lambda took the invoke, before the delete: the next run deletes and does not invoke', async () => {
    const { url, queue } = await newQueue();
    const echo = randomUUID();
    const id = await send(url, asyncRecord(`${PREFIX}natsPing`, ping(echo)));
    // The process dies at the delete: nothing after it runs (not even giving the visibility back).
    const dying: FailureQueue = {
      ...queue,
      delete: async () => {
        throw new Error('killed');
      },
      makeVisible: async () => undefined,
    };
    await expect(run(dying, ['--all', '--execute', '--visibility', '1'])).rejects.toThrow('killed');
    expect(await invocations(echo, 1)).toBe(1);
    expect(await markers.get(id)).toMatchObject({ state: 'invoked' });
    await new Promise((r) => setTimeout(r, 1200));

    const next = await run(queue, ['--all', '--execute']);
    expect(next.code).toBe(0);
    expect(next.text).toMatch(new RegExp(`already-replayed +${id} natsPing replayed by run .*not invoked again`));
    expect(await invocations(echo, 1)).toBe(1);
    expect(await visibleIds(url)).toEqual([]);
  });

  it('no answer from Lambda: in doubt, never invoked again by the tool; --forget after the logs showed no run', async () => {
    const { url, queue } = await newQueue();
    const ran = randomUUID();
    const notRan = randomUUID();
    const tookIt = await send(url, asyncRecord(`${PREFIX}natsPing`, ping(ran)));
    const lost = await send(url, asyncRecord(`${PREFIX}natsPing`, ping(notRan)));
    // One invoke reaches Lambda and its answer is lost; the other never leaves (the connection timed out).
    const unanswered: Invoke = async (target, payload) => {
      if ((payload as { data: string }).data === ran) await lambda.invoke(target, payload);
      throw new Error('socket hang up');
    };
    const first = await run(queue, ['--all', '--execute'], { invoke: unanswered });
    expect(first.code).toBe(1);
    expect(first.text).toMatch(new RegExp(`in-doubt +${tookIt} natsPing no answer from Lambda \\(socket hang up\\)`));
    expect(await invocations(ran, 1)).toBe(1);
    expect(await invocations(notRan, 0)).toBe(0);

    // Later runs (past the busy window) see the marker and never send either again.
    const later = Date.now() + 120_000;
    const second = await run(queue, ['--all', '--execute'], { now: () => later });
    expect(second.code).toBe(1);
    expect(second.text).toMatch(new RegExp(`in-doubt +${tookIt} natsPing claimed by run \\S+ at .*no recorded answer`));
    expect(second.text).toMatch(new RegExp(`in-doubt +${lost} `));
    expect(await invocations(ran, 1)).toBe(1);
    expect(await invocations(notRan, 0)).toBe(0);

    // The operator read natsPing's logs: the second never ran. Forgetting its marker makes it replayable once.
    expect((await run(queue, ['--forget', lost])).text).toContain(
      `dry run: would forget the in-doubt marker of ${lost}`,
    );
    expect((await run(queue, ['--forget', lost, '--execute'])).text).toContain(`forgot the marker of ${lost}`);
    const third = await run(queue, ['--id', lost, '--execute']);
    expect(third.code).toBe(0);
    expect(await invocations(notRan, 1)).toBe(1);
    expect(await invocations(ran, 1)).toBe(1);
    expect(await visibleIds(url)).toEqual([tookIt]);
  });

  it('two runs at once, both holding every record: each record is invoked exactly once', async () => {
    const { url, queue } = await newQueue();
    const echoes = Array.from({ length: 6 }, () => randomUUID());
    for (const echo of echoes) await send(url, asyncRecord(`${PREFIX}natsPing`, ping(echo)));
    // Visibility 0: SQS hides nothing, so both runs receive all six and only the markers stand between them.
    const [a, b] = await Promise.all([
      run(sqsFailureQueue(sqs, url), ['--all', '--execute', '--visibility', '0']),
      run(sqsFailureQueue(sqs, url), ['--all', '--execute', '--visibility', '0']),
    ]);
    for (const echo of echoes) expect(await invocations(echo, 1)).toBe(1);
    const replayed = [a, b].flatMap((r) => r.lines.filter((l) => l.startsWith('replayed ')));
    expect(replayed).toHaveLength(6);
    expect(`${a.text}\n${b.text}`).not.toMatch(/^in-doubt/m);
    // A record the loser found still `invoking` is left to the winner, which deletes it.
    expect(await visibleIds(url)).toEqual([]);
    expect(queue).toBeDefined();
  });

  it('a record Lambda refuses (no such function) is kept and its claim given back', async () => {
    const { url, queue } = await newQueue();
    const id = await send(url, asyncRecord(`${PREFIX}noSuchFunction`, { x: 1 }));
    // Trusted here as if it were replayable, so the invoke reaches Lambda, which has no such function.
    const out = await run(queue, ['--all', '--execute'], {
      trust: { ...TRUST, functions: [...REPLAYABLE_FUNCTIONS, 'noSuchFunction'] },
    });
    expect(out.code).toBe(1);
    expect(out.text).toMatch(new RegExp(`refused +${id} noSuchFunction Lambda refused \\(ResourceNotFoundException`));
    expect(await markers.get(id)).toBeUndefined();
    expect(await visibleIds(url)).toEqual([id]);
  });

  it('a forged record is listed NOT REPLAYABLE, never invoked, never claimed, and kept for a look', async () => {
    const { url, queue } = await newQueue();
    const echo = randomUUID();
    // The reproduced attack: an HTTP function's event with an invented principal, in Lambda's shape.
    const forged = await send(
      url,
      asyncRecord(`${PREFIX}syncConnections`, {
        version: '2.0',
        routeKey: 'POST /sync/connections',
        requestContext: { authorizer: { lambda: { principal: 'ops', scope: 'sync:admin' } } },
        body: JSON.stringify({ user_id: '01KB0000000000000000000000', token: 't.attacker' }),
      }),
    );
    // natsPing's event, but the record names another account: not this queue's function.
    const foreign = await send(
      url,
      asyncRecord(`${PREFIX}natsPing`, ping(echo)).replace(`:${ACCOUNT}:function:`, ':999999999999:function:'),
    );
    const listed = await run(queue, []);
    expect(listed.text).toMatch(
      new RegExp(
        `${forged} syncConnections .*NOT REPLAYABLE: names syncConnections, which is not invoked asynchronously`,
      ),
    );
    expect(listed.text).toMatch(new RegExp(`${foreign} natsPing .*NOT REPLAYABLE: names account 999999999999`));
    const out = await run(queue, ['--all', '--execute']);
    expect(out.code).toBe(1);
    expect(out.text).toMatch(new RegExp(`not-replayable +${forged} syncConnections names syncConnections`));
    expect(out.text).toMatch(new RegExp(`not-replayable +${foreign} natsPing names account 999999999999`));
    expect(await invocations(echo, 0)).toBe(0);
    expect(await markers.get(forged)).toBeUndefined();
    expect(await visibleIds(url)).toEqual([forged, foreign].sort());
  });

  it('a stream record is never invoked; after the Failures page, --discard removes it', async () => {
    const { url, queue } = await newQueue();
    const id = await send(url, streamRecord(3_600_000));
    const out = await run(queue, ['--function', 'telegramNotify', '--execute']);
    expect(out.code).toBe(1);
    expect(out.text).toMatch(
      new RegExp(`not-replayable +${id} telegramNotify stream batch .*still in the stream until `),
    );
    expect(await visibleIds(url)).toEqual([id]);
    const discarded = await run(queue, ['--function', 'telegramNotify', '--discard', '--execute']);
    expect(discarded.text).toMatch(new RegExp(`discarded +${id} telegramNotify deleted without replaying`));
    expect(await visibleIds(url)).toEqual([]);
  });

  it('the CLI, as an operator runs it: --help, then a listing and a replay', async () => {
    const { url } = await newQueue();
    const echo = randomUUID();
    const id = await send(url, asyncRecord(`${PREFIX}natsPing`, ping(echo)));
    await send(url, streamRecord(30 * 3_600_000));
    const cli = (...args: string[]) =>
      promisify(execFile)(
        process.execPath,
        [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), 'tools/ops/replay-failures.ts', ...args],
        {
          cwd: ROOT,
          env: {
            ...process.env,
            AWS_ENDPOINT_URL_SQS: moto.endpoint,
            // The stage the records name: the tool replays only this stage's functions.
            STAGE: 'test',
            AWS_REGION: REGION,
            AWS_ACCESS_KEY_ID: 'test',
            AWS_SECRET_ACCESS_KEY: 'test',
          },
        },
      );
    const help = await cli('--help');
    expect(help.stdout).toContain('usage: npm run ops:replay-failures -- [options]');
    const listing = await cli('--queue', url);
    const replay = await cli('--queue', url, '--function', 'natsPing', '--execute');
    expect(replay.stdout).toMatch(new RegExp(`replayed +${id} natsPing accepted by Lambda`));
    expect(replay.stderr).toMatch(/1\/1 records 100%/);
    expect(await invocations(echo, 1)).toBe(1);
    // The drill as an operator sees it.
    process.stdout.write(
      `[replay drill]\n$ ops:replay-failures\n${listing.stdout}$ ops:replay-failures --function natsPing --execute\n${replay.stdout}${replay.stderr}`,
    );
  }, 60_000);
});
