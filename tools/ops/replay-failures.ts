import { randomUUID } from 'node:crypto';
import { createAwsClients, TOOL_DYNAMODB_LIMITS } from '../../lib/aws/clients';
import { systemClock } from '../../lib/clock';
import { EnvReader } from '../../lib/config/env';
import { ConfigError } from '../../lib/config/errors';
import { progressReporter, ProgressOutput } from '../cli/progress';
import { CliArgs, cliSpec, parseCli, runCli, UsageError } from '../cli/run';
import { loadStackEnv } from '../cli/stack-env';
import { createSqsClient, lambdaAsyncInvoke, sqsFailureQueue, sqsQueueUrl } from './aws';
import { DynamoReplayMarkers, ReplayMarkers } from './replay-markers';
import { FailureQueue, Invoke, Received, receiveAll, replayOne, ReplayOutcome, select, streamAdvice } from './replay';
import { accountOfQueueUrl, REPLAYABLE_FUNCTIONS, replayRefusal, ReplayTrust } from './trust';

/**
 * `npm run ops:replay-failures -- --help`: the async-failure queue, listed and
 * replayed at most once per record (tools/ops/replay.ts; the runbook:
 * docs/operations.md#replaying-failed-invocations).
 */

export const USAGE = `usage: npm run ops:replay-failures -- [options]

Lists the async-failure queue (Lambda's on-failure records: function, condition,
age, attempts) and replays chosen records by invoking their function
asynchronously with the original payload, at most once each; a record is
deleted only after Lambda accepted its invoke. A dry run unless --execute.
Only Lambda's own records of this stage's asynchronous functions (natsPing,
downloadsPoll, scanRequest, scanPoll, syncTick, syncTickShard, syncStep), in
the queue's account and AWS_REGION, are replayed, each to the function that
failed; any other is listed NOT REPLAYABLE and kept (--discard deletes it).

  --function <name>       choose the records of a function (repeatable; natsPing or its full name)
  --id <message id>       choose one record (repeatable)
  --all                   choose every record
  --execute               act on the chosen records (without it: say what would be done)
  --discard               with --execute: delete the chosen records without replaying them
  --forget <message id>   with --execute: drop an in-doubt replay marker, after the function's
                          logs showed the invoke never ran (the record is then replayable again)
  --markers               list the replay markers kept: what was replayed, when, by which run
  --queue <name|url>      the queue (default <SERVICE_NAME>-<STAGE>-async-failures)
  --limit <n>             read at most n records (default 1000)
  --visibility <seconds>  hide the records read from other readers this long (default 300)
  --help                  this text

Environment: AWS_REGION, STAGE, SERVICE_NAME, TABLE_DOWNLOADS (the table that keeps the
replay markers); AWS_ENDPOINT_URL_SQS, _LAMBDA and _DYNAMODB point at a local target
(.stack/env is read when present). Exit 0 done; 1 a chosen record was refused, is in doubt
or cannot be replayed; 2 bad usage or settings.`;

export { UsageError };

export const REPLAY_CLI = cliSpec({
  usage: USAGE,
  options: {
    function: { type: 'string', multiple: true },
    id: { type: 'string', multiple: true },
    all: { type: 'boolean' },
    execute: { type: 'boolean' },
    discard: { type: 'boolean' },
    forget: { type: 'string' },
    markers: { type: 'boolean' },
    queue: { type: 'string' },
    limit: { type: 'string' },
    visibility: { type: 'string' },
  },
});

export interface ReplayOptions {
  functions: string[];
  ids: string[];
  all: boolean;
  execute: boolean;
  discard: boolean;
  forget?: string;
  markers: boolean;
  queue?: string;
  limit: number;
  visibility: number;
}

export const parseReplayArgs = (args: string[]): ReplayOptions => replayOptions(parseCli(REPLAY_CLI, args));

function replayOptions({ values: v }: CliArgs<typeof REPLAY_CLI.options>): ReplayOptions {
  const count = (name: string, text: string | undefined, fallback: number, max: number) => {
    if (text === undefined) return fallback;
    if (!/^\d{1,6}$/.test(text) || Number(text) > max) throw new UsageError(`${name} must be 0..${max}`);
    return Number(text);
  };
  return {
    functions: v.function ?? [],
    ids: v.id ?? [],
    all: v.all === true,
    execute: v.execute === true,
    discard: v.discard === true,
    ...(v.forget !== undefined ? { forget: v.forget } : {}),
    markers: v.markers === true,
    ...(v.queue !== undefined ? { queue: v.queue } : {}),
    limit: Math.max(1, count('--limit', v.limit, 1000, 100_000)),
    // SQS's bounds: 0 s to 12 h.
    visibility: count('--visibility', v.visibility, 300, 43_200),
  };
}

export interface ReplayRunDeps {
  queue: FailureQueue;
  queueName: string;
  invoke: Invoke;
  markers: ReplayMarkers;
  /** Strips `<service>-<stage>-` from names shown. */
  functionPrefix: string;
  /** What a record must be to be replayed (tools/ops/trust.ts). */
  trust: ReplayTrust;
  runId: string;
  now: () => number;
  out: (line: string) => void;
  progress: ProgressOutput;
}

/** One run of the tool over its ports; the exit code. */
export async function runReplay(o: ReplayOptions, deps: ReplayRunDeps): Promise<number> {
  const { out } = deps;
  if (o.markers) return listMarkers(deps);
  if (o.forget !== undefined) return forget(o.forget, o.execute, deps);
  const received = await receiveAll(deps.queue, { limit: o.limit, visibilitySeconds: o.visibility });
  const deleted = new Set<string>();
  try {
    out(`${deps.queueName}: ${received.length} record${received.length === 1 ? '' : 's'}`);
    for (const r of received) out(row(r, deps));
    const chosen = select(received, { ids: o.ids, functions: o.functions, all: o.all });
    const unknownIds = o.ids.filter((id) => !received.some((r) => r.message.id === id));
    for (const id of unknownIds)
      out(`no record ${id} in the queue (replayed or discarded already, or hidden by another reader)`);
    if (chosen.length === 0) {
      if (o.execute || o.ids.length + o.functions.length > 0 || o.all) out('nothing chosen');
      else out('choose records with --function, --id or --all; add --execute to act');
      return unknownIds.length > 0 ? 1 : 0;
    }
    const verb = o.discard ? 'discard' : 'replay';
    if (!o.execute) {
      out(`dry run: would ${verb} ${chosen.length}:`);
      for (const r of chosen) out(`  ${r.message.id} ${plan(r, o.discard, deps)}`);
      out('nothing was changed; add --execute to act');
      return 0;
    }
    const progress = progressReporter(deps.progress, chosen.length, deps.now, 5000, 'records');
    let failed = 0;
    for (const [i, r] of chosen.entries()) {
      let outcome: ReplayOutcome | { outcome: 'discarded' };
      if (o.discard) {
        await deps.queue.delete(r.message.receiptHandle);
        outcome = { outcome: 'discarded' };
      } else outcome = await replayOne(deps, r);
      if (outcome.outcome === 'replayed' || outcome.outcome === 'already-replayed' || outcome.outcome === 'discarded')
        deleted.add(r.message.id);
      else failed++;
      out(`${outcome.outcome.padEnd(16)} ${r.message.id} ${shortName(r, deps)} ${describeOutcome(outcome)}`);
      progress.tick(i + 1);
    }
    progress.end(chosen.length);
    out(`${chosen.length - failed} of ${chosen.length} done (run ${deps.runId})`);
    return failed > 0 || unknownIds.length > 0 ? 1 : 0;
  } finally {
    // What this run read but did not delete is visible to the next reader (and the alarm) at once.
    for (const r of received)
      if (!deleted.has(r.message.id)) await deps.queue.makeVisible(r.message.receiptHandle).catch(() => undefined);
  }
}

async function listMarkers(deps: ReplayRunDeps): Promise<number> {
  const markers = await deps.markers.list();
  deps.out(`${markers.length} replay marker${markers.length === 1 ? '' : 's'} kept`);
  for (const m of markers)
    deps.out(
      `  ${m.message_id} ${m.function_name} ${m.state} claimed ${m.claimed_at} by run ${m.run_id}` +
        (m.invoked_at ? `, invoked ${m.invoked_at}${m.request_id ? ` (request ${m.request_id})` : ''}` : ''),
    );
  return 0;
}

async function forget(id: string, execute: boolean, deps: ReplayRunDeps): Promise<number> {
  const marker = await deps.markers.get(id);
  if (!marker) {
    deps.out(`no replay marker for ${id}`);
    return 1;
  }
  if (marker.state !== 'invoking') {
    deps.out(`marker ${id} says ${marker.state}: Lambda took that invoke; it is never forgotten`);
    return 1;
  }
  if (!execute) {
    deps.out(`dry run: would forget the in-doubt marker of ${id} (${marker.function_name}, run ${marker.run_id})`);
    return 0;
  }
  deps.out(
    (await deps.markers.release(id))
      ? `forgot the marker of ${id}: it can be replayed again`
      : `marker ${id} changed meanwhile; nothing done`,
  );
  return 0;
}

function shortName(r: Received, deps: Pick<ReplayRunDeps, 'functionPrefix'>): string {
  if (r.record.kind === 'unreadable') return '(unreadable)';
  const name = r.record.functionName;
  return name.startsWith(deps.functionPrefix) ? name.slice(deps.functionPrefix.length) : name;
}

function row(r: Received, deps: ReplayRunDeps): string {
  const { record, message } = r;
  const since = record.kind === 'unreadable' ? message.sentAt : (record.failedAt ?? message.sentAt);
  const age = since === undefined ? '?' : formatAge(deps.now() - since);
  const cells = [message.id, shortName(r, deps).padEnd(14), record.kind.padEnd(10)];
  if (record.kind === 'unreadable') return `  ${cells.join(' ')} age ${age}  ${record.reason}`;
  cells.push(record.condition.padEnd(22), `age ${age}`.padEnd(14), `attempts ${record.attempts}`);
  const refusal = record.kind === 'async' ? replayRefusal(record, deps.trust) : undefined;
  const detail = refusal
    ? `NOT REPLAYABLE: ${refusal}; sent by ${message.senderId ?? '?'}`
    : record.kind === 'async'
      ? [record.error?.type, record.error?.message].filter(Boolean).join(': ').slice(0, 100)
      : streamAdvice(record, deps.now());
  return `  ${cells.join(' ')}  ${detail}`;
}

function plan(r: Received, discard: boolean, deps: Pick<ReplayRunDeps, 'trust' | 'now'>): string {
  if (discard) return 'delete without replaying';
  if (r.record.kind === 'async') {
    const refusal = replayRefusal(r.record, deps.trust);
    return refusal ? `skip: ${refusal}` : `invoke ${r.record.functionName} (Event) with the original payload`;
  }
  if (r.record.kind === 'stream') return `skip: ${streamAdvice(r.record, deps.now())}`;
  return `skip: unreadable (${r.record.reason})`;
}

function describeOutcome(o: ReplayOutcome | { outcome: 'discarded' }): string {
  switch (o.outcome) {
    case 'replayed':
      return `accepted by Lambda${o.requestId ? ` (request ${o.requestId})` : ''}, record deleted${o.note ? `; ${o.note}` : ''}`;
    case 'already-replayed':
      return `replayed by run ${o.marker.run_id} at ${o.marker.invoked_at ?? '?'}: record deleted, not invoked again`;
    case 'busy':
      return `another run (${o.marker.run_id}) is replaying it right now; left to it`;
    case 'in-doubt':
      return `${o.reason}; kept, never invoked again (docs/operations.md#in-doubt-replays)`;
    case 'refused':
      return `Lambda refused (${o.reason}); kept for a later run`;
    case 'not-replayable':
      return o.reason;
    case 'discarded':
      return 'deleted without replaying';
  }
}

export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

async function main(args: CliArgs<typeof REPLAY_CLI.options>): Promise<number> {
  const options = replayOptions(args);
  loadStackEnv();
  const r = new EnvReader(process.env);
  const region = r.string('AWS_REGION', { default: 'us-east-1', pattern: /^[a-z]{2}(-[a-z]+)+-\d$/ });
  const service = r.string('SERVICE_NAME', { default: 'torrent-scan-sync', pattern: /^[A-Za-z0-9-]{1,64}$/ });
  const stage = r.string('STAGE', { default: 'dev', pattern: /^[A-Za-z0-9-]{1,32}$/ });
  const table = r.string('TABLE_DOWNLOADS', {
    default: `${service}-${stage}-downloads`,
    pattern: /^[A-Za-z0-9._-]{3,255}$/,
    hint: 'the downloads table, where replay markers are kept',
  });
  const dynamodb = r.url('AWS_ENDPOINT_URL_DYNAMODB', ['http', 'https'], { optional: true });
  r.done();
  const name = options.queue ?? `${service}-${stage}-async-failures`;
  const sqs = createSqsClient(region);
  const aws = createAwsClients({ region, endpoints: { dynamodb } }, TOOL_DYNAMODB_LIMITS);
  const lambda = lambdaAsyncInvoke(region);
  try {
    const queueUrl = /^https?:\/\//.test(name) ? name : await sqsQueueUrl(sqs, name);
    return await runReplay(options, {
      queue: sqsFailureQueue(sqs, queueUrl),
      queueName: name,
      invoke: lambda.invoke,
      markers: new DynamoReplayMarkers({ documents: aws.documents, table }),
      functionPrefix: `${service}-${stage}-`,
      trust: {
        region,
        account: accountOfQueueUrl(queueUrl),
        functionPrefix: `${service}-${stage}-`,
        functions: REPLAYABLE_FUNCTIONS,
      },
      runId: randomUUID(),
      now: systemClock,
      out: (line) => process.stdout.write(`${line}\n`),
      progress: process.stderr,
    });
  } finally {
    lambda.close();
    aws.dynamodb.destroy();
    sqs.destroy();
  }
}

if (require.main === module) runCli(REPLAY_CLI, main, { expected: [ConfigError] });
