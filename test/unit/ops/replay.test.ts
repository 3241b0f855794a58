import { functionOfArn, parseFailureRecord, streamReadableUntil } from '../../../tools/ops/failure-record';
import { formatAge, parseReplayArgs, UsageError } from '../../../tools/ops/replay-failures';
import { FailureQueue, QueueMessage, receiveAll, select } from '../../../tools/ops/replay';
import { accountOfQueueUrl, REPLAYABLE_FUNCTIONS, replayRefusal, type ReplayTrust } from '../../../tools/ops/trust';

const ARN = 'arn:aws:lambda:eu-west-1:123456789012:function:torrent-scan-sync-prod-syncStep';

describe('failure records', () => {
  it('reads an async invocation record: function, condition, attempts, payload, error', () => {
    const record = parseFailureRecord(
      JSON.stringify({
        version: '1.0',
        timestamp: '2026-12-06T08:00:00.000Z',
        requestContext: {
          requestId: 'e4b46cbf-b738-4a8e-8880-a18cdf61200e',
          functionArn: `${ARN}:$LATEST`,
          condition: 'EventAgeExceeded',
          approximateInvokeCount: 2,
        },
        requestPayload: { user_id: 'u', attempt_id: 'a' },
        responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
        responsePayload: { errorType: 'TimeoutError', errorMessage: 'step portfolio timed out', trace: [] },
      }),
    );
    expect(record).toEqual({
      kind: 'async',
      functionArn: `${ARN}:$LATEST`,
      functionName: 'torrent-scan-sync-prod-syncStep',
      qualifier: undefined,
      condition: 'EventAgeExceeded',
      attempts: 2,
      failedAt: Date.parse('2026-12-06T08:00:00.000Z'),
      requestId: 'e4b46cbf-b738-4a8e-8880-a18cdf61200e',
      payload: { user_id: 'u', attempt_id: 'a' },
      error: { type: 'TimeoutError', message: 'step portfolio timed out' },
    });
  });

  it('reads a stream record as the batch it names, readable 24 h after it arrived', () => {
    const record = parseFailureRecord(
      JSON.stringify({
        requestContext: { functionArn: ARN, condition: 'RetryAttemptsExhausted', approximateInvokeCount: 10001 },
        DDBStreamBatchInfo: {
          shardId: 'shardId-1',
          startSequenceNumber: '100',
          endSequenceNumber: '200',
          approximateArrivalOfFirstRecord: '2026-12-05T10:00:00Z',
          approximateArrivalOfLastRecord: '2026-12-05T10:05:00Z',
          batchSize: 7,
          streamArn: 'arn:aws:dynamodb:eu-west-1:1:table/t/stream/x',
        },
      }),
    );
    expect(record).toMatchObject({
      kind: 'stream',
      source: 'dynamodb',
      shardId: 'shardId-1',
      batchSize: 7,
      attempts: 10001,
    });
    expect(record.kind === 'stream' && streamReadableUntil(record)).toBe(Date.parse('2026-12-06T10:00:00Z'));
    expect(record).not.toHaveProperty('payload');
  });

  it('keeps anything else as unreadable, and reads a qualified ARN', () => {
    expect(parseFailureRecord('{')).toEqual({ kind: 'unreadable', reason: 'not JSON' });
    expect(parseFailureRecord('[1]')).toEqual({ kind: 'unreadable', reason: 'not a JSON object' });
    expect(parseFailureRecord(JSON.stringify({ requestContext: { functionArn: 'arn:aws:s3:::b' } }))).toMatchObject({
      kind: 'unreadable',
    });
    expect(parseFailureRecord(JSON.stringify({ requestContext: { functionArn: ARN } }))).toEqual({
      kind: 'unreadable',
      reason: 'neither a requestPayload nor a stream batch',
    });
    expect(functionOfArn(`${ARN}:live`)).toEqual({ name: 'torrent-scan-sync-prod-syncStep', qualifier: 'live' });
    expect(functionOfArn(`${ARN}:$LATEST`)).toEqual({ name: 'torrent-scan-sync-prod-syncStep', qualifier: undefined });
  });
});

describe('reading and choosing', () => {
  const body = (fn: string) =>
    JSON.stringify({ requestContext: { functionArn: `arn:aws:lambda:r:1:function:${fn}` }, requestPayload: {} });

  it('receives until nothing new arrives, keeping the newest receipt handle of a message seen twice', async () => {
    const batches: QueueMessage[][] = [
      [
        { id: 'a', receiptHandle: 'a1', body: body('svc-dev-natsPing') },
        { id: 'b', receiptHandle: 'b1', body: body('svc-dev-scanPoll') },
      ],
      [{ id: 'a', receiptHandle: 'a2', body: body('svc-dev-natsPing') }],
    ];
    const queue: FailureQueue = {
      receive: async () => batches.shift() ?? [],
      delete: async () => undefined,
      makeVisible: async () => undefined,
    };
    const received = await receiveAll(queue, { limit: 100, visibilitySeconds: 30 });
    expect(received.map((r) => [r.message.id, r.message.receiptHandle])).toEqual([
      ['a', 'a2'],
      ['b', 'b1'],
    ]);
    expect(select(received, { ids: [], functions: ['natsPing'], all: false }).map((r) => r.message.id)).toEqual(['a']);
    expect(select(received, { ids: ['b'], functions: [], all: false }).map((r) => r.message.id)).toEqual(['b']);
    expect(select(received, { ids: [], functions: ['Poll'], all: false })).toEqual([]);
    expect(select(received, { ids: [], functions: [], all: true })).toHaveLength(2);
  });

  it('parses its arguments and says its usage', () => {
    expect(
      parseReplayArgs(['--function', 'natsPing', '--function', 'scanPoll', '--execute', '--visibility', '0']),
    ).toMatchObject({
      functions: ['natsPing', 'scanPoll'],
      execute: true,
      visibility: 0,
      limit: 1000,
    });
    expect(() => parseReplayArgs(['--id'])).toThrow(UsageError);
    expect(() => parseReplayArgs(['--visibility', '99999'])).toThrow(/0\.\.43200/);
    expect(() => parseReplayArgs(['--frobnicate'])).toThrow(/unknown option --frobnicate/);
    expect(formatAge(59_000)).toBe('59 s');
    expect(formatAge(3_600_000 + 120_000)).toBe('1 h 2 min');
    expect(formatAge(50 * 3_600_000)).toBe('2 d 2 h');
  });
});

describe('which records may be replayed (tools/ops/trust.ts)', () => {
  const trust: ReplayTrust = {
    region: 'eu-west-1',
    account: '123456789012',
    functionPrefix: 'torrent-scan-sync-prod-',
    functions: REPLAYABLE_FUNCTIONS,
  };
  /** Lambda's invocation record, as its on-failure destination writes it; `change` makes it another. */
  type Raw = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  const record = (fn: string, change: (r: Raw) => void = () => undefined) => {
    const r = {
      version: '1.0',
      timestamp: '2026-12-06T08:00:00.000Z',
      requestContext: {
        requestId: 'e4b46cbf-b738-4a8e-8880-a18cdf61200e',
        functionArn: `arn:aws:lambda:eu-west-1:123456789012:function:torrent-scan-sync-prod-${fn}:$LATEST`,
        condition: 'RetriesExhausted',
        approximateInvokeCount: 3,
      },
      requestPayload: { source: 'aws.events' },
      responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
      responsePayload: { errorType: 'Error', errorMessage: 'boom' },
    };
    change(r);
    const parsed = parseFailureRecord(JSON.stringify(r));
    if (parsed.kind !== 'async') throw new Error(`not async: ${JSON.stringify(parsed)}`);
    return parsed;
  };

  it("replays Lambda's record of an asynchronous function of this stage", () => {
    for (const fn of REPLAYABLE_FUNCTIONS)
      expect(`${fn}: ${replayRefusal(record(fn), trust)}`).toBe(`${fn}: undefined`);
  });

  it('refuses a forged record naming an HTTP function, with an invented principal (the reproduced attack)', () => {
    const forged = record('syncConnections', (r) => {
      r.requestPayload = {
        version: '2.0',
        routeKey: 'POST /sync/connections',
        requestContext: { authorizer: { lambda: { principal: 'ops', scope: 'sync:admin' } } },
        body: JSON.stringify({ user_id: '01KB0000000000000000000000', token: 't.attacker' }),
      };
    });
    expect(replayRefusal(forged, trust)).toMatch(/syncConnections, which is not invoked asynchronously/);
    for (const fn of ['downloadsCreate', 'authorizer', 'webActions', 'telegramWebhook', 'telegramNotify'])
      expect(replayRefusal(record(fn), trust)).toMatch(/not invoked asynchronously/);
  });

  it('refuses a record of another account, region, stage or version, and one not in Lambda’s shape', () => {
    const arn = (text: string) => (r: Raw) => (r.requestContext.functionArn = text);
    expect(
      replayRefusal(
        record('syncStep', arn('arn:aws:lambda:eu-west-1:999999999999:function:torrent-scan-sync-prod-syncStep')),
        trust,
      ),
    ).toMatch(/account 999999999999, not the queue's 123456789012/);
    expect(
      replayRefusal(
        record('syncStep', arn('arn:aws:lambda:us-east-1:123456789012:function:torrent-scan-sync-prod-syncStep')),
        trust,
      ),
    ).toMatch(/region us-east-1/);
    expect(
      replayRefusal(
        record('syncStep', arn('arn:aws:lambda:eu-west-1:123456789012:function:torrent-scan-sync-dev-syncStep')),
        trust,
      ),
    ).toMatch(/not a function of torrent-scan-sync-prod-\*/);
    expect(
      replayRefusal(
        record('syncStep', arn('arn:aws:lambda:eu-west-1:123456789012:function:torrent-scan-sync-prod-syncStep:7')),
        trust,
      ),
    ).toMatch(/version or alias 7/);
    expect(replayRefusal(record('syncStep'), { ...trust, account: undefined })).toMatch(/names no account/);
    const shapes: Array<[(r: Raw) => void, RegExp]> = [
      [(r) => delete r.version, /version/],
      [(r) => (r.timestamp = 'yesterday'), /timestamp/],
      [(r) => (r.requestContext.requestId = 'r-1'), /requestId/],
      [(r) => (r.requestContext.condition = 'Whatever'), /condition/],
      [(r) => (r.requestContext.approximateInvokeCount = 99), /approximateInvokeCount/],
      [(r) => delete r.responseContext, /responseContext/],
    ];
    for (const [change, reason] of shapes)
      expect(replayRefusal(record('syncStep', change), trust)).toMatch(
        new RegExp(`not Lambda's record: .*${reason.source}`),
      );
  });

  it('reads the account of a queue URL, AWS’s and moto’s', () => {
    expect(
      accountOfQueueUrl('https://sqs.eu-west-1.amazonaws.com/123456789012/torrent-scan-sync-prod-async-failures'),
    ).toBe('123456789012');
    expect(accountOfQueueUrl('http://127.0.0.1:5000/000000000000/q')).toBe('000000000000');
    expect(accountOfQueueUrl('http://127.0.0.1:5000/q')).toBeUndefined();
    expect(accountOfQueueUrl('not a url')).toBeUndefined();
  });
});
