import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  Shard,
  _Record,
} from '@aws-sdk/client-dynamodb-streams';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../lib/log';

/**
 * The DynamoDB Streams event source under serverless offline: what AWS's
 * event source mapping does for a `stream` function event, on DynamoDB Local.
 * Per shard, one batch at a time, invoked synchronously (RequestResponse)
 * through offline's Lambda endpoint, so a table item's records reach the
 * function in stream order. A failed invocation is retried (at least once,
 * like AWS) up to `maximumRetryAttempts` (-1: no limit), then the batch is
 * skipped and logged. With `functionResponseType: ReportBatchItemFailures` a
 * returned `batchItemFailures` is a partial success, as on AWS: the batch is
 * invoked again from the lowest reported sequence number (an attempt too);
 * an identifier that names no record of the batch fails the whole batch.
 */

export interface StreamRoute {
  functionName: string;
  tableName: string;
  batchSize: number;
  startingPosition: 'TRIM_HORIZON' | 'LATEST';
  maximumRetryAttempts: number;
  reportBatchItemFailures: boolean;
}

interface FunctionDef {
  name: string;
  events?: Array<Record<string, unknown>>;
}

/** `stream` events of type dynamodb whose arn is `!GetAtt <Table>.StreamArn` of a table in the template. */
export function streamRoutes(
  functions: Record<string, FunctionDef>,
  resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>,
): StreamRoute[] {
  const routes: StreamRoute[] = [];
  for (const [key, def] of Object.entries(functions)) {
    for (const event of def.events ?? []) {
      const stream = event.stream as Record<string, unknown> | undefined;
      if (!stream || stream.type !== 'dynamodb') continue;
      const getAtt = (stream.arn as Record<string, unknown> | undefined)?.['Fn::GetAtt'];
      const logicalId = Array.isArray(getAtt)
        ? getAtt[0]
        : typeof getAtt === 'string'
          ? getAtt.split('.')[0]
          : undefined;
      const table = typeof logicalId === 'string' ? resources[logicalId] : undefined;
      const tableName = table?.Properties?.TableName;
      if (table?.Type !== 'AWS::DynamoDB::Table' || typeof tableName !== 'string') {
        throw new Error(`${key}: a dynamodb stream event needs arn: !GetAtt <Table>.StreamArn of a table in resources`);
      }
      routes.push({
        functionName: def.name,
        tableName,
        batchSize: Number(stream.batchSize ?? 100),
        startingPosition: stream.startingPosition === 'LATEST' ? 'LATEST' : 'TRIM_HORIZON',
        maximumRetryAttempts: Number(stream.maximumRetryAttempts ?? 3),
        reportBatchItemFailures: stream.functionResponseType === 'ReportBatchItemFailures',
      });
    }
  }
  return routes;
}

export interface StreamBridgeOptions {
  dynamodb: DynamoDBClient;
  streams: DynamoDBStreamsClient;
  lambda: LambdaClient;
  routes: StreamRoute[];
  log: Logger;
  pollMs?: number;
}

export function startStreamBridge(opts: StreamBridgeOptions): { stop(): Promise<void> } {
  const controller = new AbortController();
  const pumps = opts.routes.map((route) =>
    pump(route, opts, controller.signal).catch((err) => {
      if (!controller.signal.aborted) opts.log.error('stream_bridge_stopped', { function: route.functionName, err });
    }),
  );
  return {
    async stop() {
      controller.abort();
      await Promise.all(pumps);
    },
  };
}

async function pump(route: StreamRoute, opts: StreamBridgeOptions, signal: AbortSignal): Promise<void> {
  // An idle poll is one GetRecords per open shard; the shard list is refreshed now and then (shards roll over rarely).
  const pollMs = opts.pollMs ?? 500;
  const SHARD_REFRESH_MS = 10_000;
  const log = opts.log.child({ function: route.functionName, table: route.tableName });
  const table = await opts.dynamodb.send(new DescribeTableCommand({ TableName: route.tableName }), {
    abortSignal: signal,
  });
  const streamArn = table.Table?.LatestStreamArn;
  if (!streamArn) throw new Error(`table ${route.tableName} has no stream (StreamSpecification missing?)`);
  log.info('stream_bridge_started', { stream: streamArn });
  // shard id → iterator; null once the shard is closed and read to its end.
  const iterators = new Map<string, string | null>();
  let first = true;
  let shards: Shard[] = [];
  let listedAt = 0;
  let failures = 0;
  while (!signal.aborted) {
    try {
      if (first || Date.now() - listedAt > SHARD_REFRESH_MS || shards.some((s) => iterators.get(s.ShardId!) === null)) {
        shards = (await listShards(opts.streams, streamArn, signal)).filter((s) => iterators.get(s.ShardId!) !== null);
        listedAt = Date.now();
      }
      for (const shard of shards) {
        if (iterators.has(shard.ShardId!)) continue;
        // Shards found later are read from their start: their records are newer than anything seen.
        const type = first ? route.startingPosition : 'TRIM_HORIZON';
        const it = await opts.streams.send(
          new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shard.ShardId, ShardIteratorType: type }),
          { abortSignal: signal },
        );
        iterators.set(shard.ShardId!, it.ShardIterator ?? null);
      }
      first = false;
      let busy = false;
      // Parents come before their children in DescribeStream's list: a parent is drained first.
      for (const shard of shards) {
        const iterator = iterators.get(shard.ShardId!);
        if (!iterator) continue;
        if (shard.ParentShardId && iterators.get(shard.ParentShardId)) continue;
        let page;
        try {
          page = await opts.streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: route.batchSize }), {
            abortSignal: signal,
          });
        } catch (err) {
          // An iterator that expired or points before the trim horizon is replaced by one from the horizon: records
          // may be delivered again, which consumers must bear anyway (the stream is at least once).
          if (!ITERATOR_LOST.has((err as Error).name)) throw err;
          log.warn('stream_iterator_lost', { shard: shard.ShardId, err });
          iterators.delete(shard.ShardId!);
          continue;
        }
        iterators.set(shard.ShardId!, page.NextShardIterator ?? null);
        if (page.Records && page.Records.length > 0) {
          busy = true;
          await invokeBatch(route, opts.lambda, streamArn, page.Records, log, signal);
        }
      }
      if (!busy) await sleep(pollMs, undefined, { signal }).catch(() => undefined);
      failures = 0;
    } catch (err) {
      // DynamoDB Local down or hung, a shard gone: the bridge never stops on its own; it backs off and goes on.
      if (signal.aborted) return;
      failures += 1;
      const waitMs = Math.min(10_000, 250 * 2 ** Math.min(failures, 6));
      log.warn('stream_bridge_error', { err, retry_in_ms: waitMs });
      await sleep(waitMs, undefined, { signal }).catch(() => undefined);
    }
  }
}

const ITERATOR_LOST = new Set(['TrimmedDataAccessException', 'ExpiredIteratorException']);

async function listShards(streams: DynamoDBStreamsClient, streamArn: string, signal: AbortSignal): Promise<Shard[]> {
  const shards: Shard[] = [];
  let start: string | undefined;
  do {
    const page = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: start }), {
      abortSignal: signal,
    });
    shards.push(...(page.StreamDescription?.Shards ?? []));
    start = page.StreamDescription?.LastEvaluatedShardId;
  } while (start);
  return shards;
}

async function invokeBatch(
  route: StreamRoute,
  lambda: LambdaClient,
  streamArn: string,
  all: _Record[],
  log: Logger,
  signal: AbortSignal,
): Promise<void> {
  let records = all;
  for (let attempt = 0; ; attempt += 1) {
    const payload = new TextEncoder().encode(
      JSON.stringify({ Records: records.map((r) => toLambdaRecord(r, streamArn)) }),
    );
    let resumeAt: number | undefined;
    try {
      const out = await lambda.send(
        new InvokeCommand({ FunctionName: route.functionName, InvocationType: 'RequestResponse', Payload: payload }),
        { abortSignal: signal },
      );
      if (out.FunctionError) throw new Error(`function error: ${out.FunctionError}`);
      resumeAt = route.reportBatchItemFailures ? checkpoint(out.Payload, records) : undefined;
      if (resumeAt === undefined) return;
      records = records.slice(resumeAt);
    } catch (err) {
      if (signal.aborted) return;
      if (route.maximumRetryAttempts >= 0 && attempt >= route.maximumRetryAttempts) {
        log.error('stream_batch_skipped', {
          records: records.length,
          first_sequence: records[0].dynamodb?.SequenceNumber,
          err,
        });
        return;
      }
      log.warn('stream_batch_retry', { attempt: attempt + 1, err });
      await sleep(Math.min(10_000, 500 * 2 ** attempt), undefined, { signal }).catch(() => undefined);
      continue;
    }
    if (route.maximumRetryAttempts >= 0 && attempt >= route.maximumRetryAttempts) {
      log.error('stream_batch_skipped', {
        records: records.length,
        first_sequence: records[0].dynamodb?.SequenceNumber,
      });
      return;
    }
    // A partial success made progress (or waited its time): the rest goes again at once, as on AWS.
    log.info('stream_batch_partial', { attempt: attempt + 1, resume_sequence: records[0].dynamodb?.SequenceNumber });
  }
}

/**
 * The index to resume from, per a `{batchItemFailures: [{itemIdentifier}]}` answer: the lowest
 * sequence number reported; undefined for a full success. Throws (a failed batch) for an
 * identifier that is not a sequence number of the batch.
 */
export function checkpoint(payload: Uint8Array | undefined, records: _Record[]): number | undefined {
  if (!payload || payload.length === 0) return undefined;
  const answer = JSON.parse(new TextDecoder().decode(payload)) as { batchItemFailures?: unknown } | null;
  const failures = answer?.batchItemFailures;
  if (!Array.isArray(failures) || failures.length === 0) return undefined;
  let lowest: number | undefined;
  for (const failure of failures) {
    const id = (failure as { itemIdentifier?: unknown } | null)?.itemIdentifier;
    const index = records.findIndex((r) => typeof id === 'string' && id !== '' && r.dynamodb?.SequenceNumber === id);
    if (index < 0) throw new Error(`batchItemFailures names no record of the batch: ${JSON.stringify(id)}`);
    lowest = lowest === undefined ? index : Math.min(lowest, index);
  }
  return lowest;
}

/** GetRecords' shape → the Lambda event's (epoch seconds instead of a Date, the source named). */
function toLambdaRecord(record: _Record, streamArn: string): Record<string, unknown> {
  const created = record.dynamodb?.ApproximateCreationDateTime;
  return {
    eventID: record.eventID,
    eventName: record.eventName,
    eventVersion: record.eventVersion ?? '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: record.awsRegion,
    eventSourceARN: streamArn,
    dynamodb: {
      ...record.dynamodb,
      ApproximateCreationDateTime: created instanceof Date ? Math.floor(created.getTime() / 1000) : created,
    },
  };
}
