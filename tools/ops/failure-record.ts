/**
 * What Lambda writes to the on-failure destination (the `…-async-failures`
 * queue, docs/deploy.md §5), read into one of three shapes:
 *
 * - `async`: an asynchronous invocation that failed every try (Lambda's
 *   record: `requestContext.{requestId, functionArn, condition,
 *   approximateInvokeCount}`, `requestPayload` — the original event, whole —
 *   `responseContext.{statusCode, executedVersion, functionError}` and
 *   `responsePayload`, the function's error). Replayable: the payload is here.
 * - `stream`: a stream event source mapping that gave up on a batch
 *   (`DDBStreamBatchInfo` / `KinesisBatchInfo`: the shard, the first and last
 *   sequence numbers, the batch size, the stream's ARN). The record names the
 *   batch and does NOT carry it: the records can only be read back from the
 *   stream, which keeps them 24 hours after they arrived; after that they are
 *   gone. Never replayed by the tool (docs/operations.md#replaying-failed-invocations).
 * - `unreadable`: anything else, shown raw.
 */

export const STREAM_RETENTION_MS = 24 * 3600_000;

interface Common {
  functionArn: string;
  functionName: string;
  /** A version or alias the failed invocation named; undefined for `$LATEST`/unqualified. */
  qualifier?: string;
  /** `RetriesExhausted`, `EventAgeExceeded` (async); `RetryAttemptsExhausted`, `RecordAgeExceeded`… (streams). */
  condition: string;
  attempts: number;
  /** When Lambda wrote the record (epoch ms), if it says. */
  failedAt?: number;
}

export interface AsyncFailure extends Common {
  kind: 'async';
  requestId?: string;
  payload: unknown;
  error?: { type?: string; message?: string };
  /** The first way the record differs from the one Lambda writes (undefined: it has Lambda's shape). */
  notLambda?: string;
}

export interface StreamFailure extends Common {
  kind: 'stream';
  source: 'dynamodb' | 'kinesis';
  streamArn?: string;
  shardId?: string;
  startSequenceNumber?: string;
  endSequenceNumber?: string;
  batchSize?: number;
  firstArrival?: number;
  lastArrival?: number;
}

export interface Unreadable {
  kind: 'unreadable';
  reason: string;
}

export type FailureRecord = AsyncFailure | StreamFailure | Unreadable;

export function functionOfArn(arn: string): { name: string; qualifier?: string } | undefined {
  const parts = arn.split(':');
  if (parts.length < 7 || parts[0] !== 'arn' || parts[2] !== 'lambda' || parts[5] !== 'function' || !parts[6])
    return undefined;
  const qualifier = parts[7];
  return { name: parts[6], qualifier: qualifier && qualifier !== '$LATEST' ? qualifier : undefined };
}

export function parseFailureRecord(body: string): FailureRecord {
  let record: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(body);
    if (!isObject(parsed)) return { kind: 'unreadable', reason: 'not a JSON object' };
    record = parsed;
  } catch {
    return { kind: 'unreadable', reason: 'not JSON' };
  }
  const context = isObject(record.requestContext) ? record.requestContext : undefined;
  const arn = typeof context?.functionArn === 'string' ? context.functionArn : undefined;
  const fn = arn ? functionOfArn(arn) : undefined;
  if (!context || !arn || !fn) return { kind: 'unreadable', reason: 'no requestContext.functionArn' };
  const common: Common = {
    functionArn: arn,
    functionName: fn.name,
    qualifier: fn.qualifier,
    condition: typeof context.condition === 'string' ? context.condition : 'unknown',
    attempts: typeof context.approximateInvokeCount === 'number' ? context.approximateInvokeCount : 0,
    failedAt: time(record.timestamp),
  };
  const batch = isObject(record.DDBStreamBatchInfo)
    ? { source: 'dynamodb' as const, info: record.DDBStreamBatchInfo }
    : isObject(record.KinesisBatchInfo)
      ? { source: 'kinesis' as const, info: record.KinesisBatchInfo }
      : undefined;
  if (batch) {
    const i = batch.info;
    return {
      kind: 'stream',
      ...common,
      source: batch.source,
      streamArn: str(i.streamArn),
      shardId: str(i.shardId),
      startSequenceNumber: str(i.startSequenceNumber),
      endSequenceNumber: str(i.endSequenceNumber),
      batchSize: typeof i.batchSize === 'number' ? i.batchSize : undefined,
      firstArrival: time(i.approximateArrivalOfFirstRecord),
      lastArrival: time(i.approximateArrivalOfLastRecord),
    };
  }
  if (!('requestPayload' in record))
    return { kind: 'unreadable', reason: 'neither a requestPayload nor a stream batch' };
  const response = isObject(record.responsePayload) ? record.responsePayload : undefined;
  const notLambda = lambdaShapeProblem(record, context);
  return {
    kind: 'async',
    ...common,
    requestId: str(context.requestId),
    payload: record.requestPayload,
    error: response ? { type: str(response.errorType), message: str(response.errorMessage) } : undefined,
    ...(notLambda ? { notLambda } : {}),
  };
}

/** The conditions Lambda writes for an asynchronous invocation it gave up on. */
export const ASYNC_CONDITIONS = ['RetriesExhausted', 'EventAgeExceeded'];

/**
 * Where an asynchronous record departs from Lambda's invocation record
 * (version 1.0, a timestamp, a request id, one of its conditions, a count, a
 * response context). Only a naive forgery fails this: a careful one copies
 * the shape, which is why the queue's policy decides who may send at all and
 * the replay names only this stage's asynchronous functions (tools/ops/trust.ts).
 */
function lambdaShapeProblem(record: Record<string, unknown>, context: Record<string, unknown>): string | undefined {
  if (record.version !== '1.0') return 'version is not "1.0"';
  if (time(record.timestamp) === undefined) return 'no timestamp';
  if (typeof context.requestId !== 'string' || !/^[0-9a-f-]{36}$/i.test(context.requestId))
    return 'requestContext.requestId is not a request id';
  if (!ASYNC_CONDITIONS.includes(context.condition as string))
    return `requestContext.condition is not one of ${ASYNC_CONDITIONS.join(', ')}`;
  const count = context.approximateInvokeCount;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 0 || count > 3)
    return 'requestContext.approximateInvokeCount is not 0..3';
  if (!isObject(record.responseContext)) return 'no responseContext';
  return undefined;
}

/** Until when a stream failure's records can still be read from the stream (24 h after they arrived). */
export function streamReadableUntil(failure: StreamFailure): number | undefined {
  return failure.firstArrival === undefined ? undefined : failure.firstArrival + STREAM_RETENTION_MS;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const str = (value: unknown) => (typeof value === 'string' ? value : undefined);

function time(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}
