import { functionOfArn, parseFailureRecord, streamReadableUntil } from '../../../tools/ops/failure-record';
import { formatAge, parseReplayArgs, UsageError } from '../../../tools/ops/replay-failures';
import { FailureQueue, QueueMessage, receiveAll, select } from '../../../tools/ops/replay';

const ARN = 'arn:aws:lambda:eu-west-1:123456789012:function:torrent-scan-sync-prod-syncStep';

describe('failure records', () => {
  it('reads an async invocation record: function, condition, attempts, payload, error', () => {
    const record = parseFailureRecord(
      JSON.stringify({
        version: '1.0',
        timestamp: '2026-12-06T08:00:00.000Z',
        requestContext: {
          requestId: 'r-1',
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
      requestId: 'r-1',
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
