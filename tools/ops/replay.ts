import { FailureRecord, parseFailureRecord, streamReadableUntil } from './failure-record';
import type { ReplayMarker, ReplayMarkers } from './replay-markers';
import { replayRefusal, type ReplayTrust } from './trust';

/**
 * The failure queue's replay (docs/operations.md#replaying-failed-invocations),
 * written against three ports so the protocol is tested whole: the queue,
 * Lambda's asynchronous invoke, the durable markers.
 *
 * At most once, and exactly once when nothing dies (docs/decisions.md, 280):
 * 1. every message is received with a visibility timeout, so two runs at the
 *    same time normally see different messages;
 * 2. the replay of one message is claimed by a conditional put of its id
 *    (replay-markers.ts) BEFORE the invoke: of two runs that hold the same
 *    message (the timeout passed), one claims, the other stops;
 * 3. the invoke is sent once (no SDK retry: a lost answer would invoke twice);
 * 4. Lambda's 202 moves the marker to `invoked`, then the message is deleted.
 * Killed between 3 and 4, the marker stays `invoking`: nobody knows whether
 * Lambda took the invoke, and the tool never sends it again (an operator
 * decides, after reading the function's logs). Killed between 4 and the
 * delete, the next run finds `invoked` and only deletes.
 */

export interface QueueMessage {
  id: string;
  receiptHandle: string;
  body: string;
  /** When the record was put on the queue (epoch ms). */
  sentAt?: number;
  receiveCount?: number;
  /** Who sent it (SQS's SenderId: the sending role's id and session), for an operator looking at a refused one. */
  senderId?: string;
}

export interface FailureQueue {
  receive(max: number, visibilitySeconds: number): Promise<QueueMessage[]>;
  delete(receiptHandle: string): Promise<void>;
  /** Visible to every reader again, now. */
  makeVisible(receiptHandle: string): Promise<void>;
}

/** Lambda answered, and its answer says it did NOT take the invoke (a 4xx: no such function, throttled, too large…). */
export class InvokeRefusedError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(`${code}: ${message}`);
    this.name = 'InvokeRefusedError';
  }
}

/** One asynchronous invoke; resolves when Lambda accepted it (202); InvokeRefusedError when it definitely did not. */
export type Invoke = (
  target: { functionName: string; qualifier?: string },
  payload: unknown,
) => Promise<{ requestId?: string }>;

export interface Received {
  message: QueueMessage;
  record: FailureRecord;
}

/** Receives until a batch brings nothing new (or `limit` messages), each hidden for `visibilitySeconds`. */
export async function receiveAll(
  queue: FailureQueue,
  options: { limit: number; visibilitySeconds: number },
): Promise<Received[]> {
  const seen = new Map<string, Received>();
  while (seen.size < options.limit) {
    const batch = await queue.receive(Math.min(10, options.limit - seen.size), options.visibilitySeconds);
    let fresh = 0;
    for (const message of batch) {
      const known = seen.get(message.id);
      // The same message again (its visibility passed): keep the newest receipt handle, the only one that deletes.
      if (known) known.message.receiptHandle = message.receiptHandle;
      else {
        seen.set(message.id, { message, record: parseFailureRecord(message.body) });
        fresh++;
      }
    }
    if (fresh === 0) break;
  }
  return [...seen.values()];
}

export interface Selection {
  ids: string[];
  functions: string[];
  all: boolean;
}

/** The messages a selection names: by message id, by function (full name or the part after `<service>-<stage>-`), or all. */
export function select(received: Received[], selection: Selection): Received[] {
  return received.filter((r) => {
    if (selection.all || selection.ids.includes(r.message.id)) return true;
    if (r.record.kind === 'unreadable') return false;
    const name = r.record.functionName;
    return selection.functions.some((f) => name === f || name.endsWith(`-${f}`));
  });
}

export type ReplayOutcome =
  | { outcome: 'replayed'; requestId?: string; note?: string }
  | { outcome: 'already-replayed'; marker: ReplayMarker }
  | { outcome: 'busy'; marker: ReplayMarker }
  | { outcome: 'in-doubt'; marker?: ReplayMarker; reason: string }
  | { outcome: 'refused'; reason: string }
  | { outcome: 'not-replayable'; reason: string };

/** Longer than one invoke can take (the client's bounds: 3 s to connect, 15 s for the answer). */
export const CLAIM_BUSY_MS = 60_000;

export interface ReplayDeps {
  queue: FailureQueue;
  invoke: Invoke;
  markers: ReplayMarkers;
  /** What a record must be to be replayed (tools/ops/trust.ts). */
  trust: ReplayTrust;
  runId: string;
  now: () => number;
}

export async function replayOne(deps: ReplayDeps, received: Received): Promise<ReplayOutcome> {
  const { message, record } = received;
  if (record.kind === 'unreadable') return { outcome: 'not-replayable', reason: `unreadable record: ${record.reason}` };
  if (record.kind === 'stream') return { outcome: 'not-replayable', reason: streamAdvice(record, deps.now()) };
  const refusal = replayRefusal(record, deps.trust);
  if (refusal) return { outcome: 'not-replayable', reason: `${refusal}; kept (docs/operations.md#refused-records)` };
  const claim = await deps.markers.claim(
    { message_id: message.id, run_id: deps.runId, function_name: record.functionName },
    deps.now(),
  );
  if (!claim.claimed) {
    if (claim.held.state === 'invoked') {
      // Replayed before, and the delete was lost (a killed run): finish it, never invoke again.
      await deps.queue.delete(message.receiptHandle);
      return { outcome: 'already-replayed', marker: claim.held };
    }
    // Claimed moments ago: another run is between its claim and Lambda's answer right now.
    if (deps.now() - Date.parse(claim.held.claimed_at) < CLAIM_BUSY_MS) return { outcome: 'busy', marker: claim.held };
    return {
      outcome: 'in-doubt',
      marker: claim.held,
      reason: `claimed by run ${claim.held.run_id} at ${claim.held.claimed_at}, whose invoke has no recorded answer`,
    };
  }
  let requestId: string | undefined;
  try {
    // The function that failed, and no other: the name replayRefusal checked, unqualified.
    ({ requestId } = await deps.invoke({ functionName: record.functionName }, record.payload));
  } catch (err) {
    if (err instanceof InvokeRefusedError) {
      // Lambda said no: nothing runs, so the claim goes back and the message stays for a later try.
      await deps.markers.release(message.id, deps.runId);
      return { outcome: 'refused', reason: err.message };
    }
    return { outcome: 'in-doubt', reason: `no answer from Lambda (${(err as Error).message}): it may have run` };
  }
  let note: string | undefined;
  try {
    await deps.markers.markInvoked(message.id, deps.runId, requestId, deps.now());
  } catch (err) {
    // The message is deleted next, so nobody can replay it; the marker stays `invoking` (shown as in doubt) until TTL.
    note = `marker not updated (${(err as Error).message})`;
  }
  await deps.queue.delete(message.receiptHandle);
  return { outcome: 'replayed', requestId, note };
}

/** What to do about a stream batch the record names but does not carry. */
export function streamAdvice(record: Extract<FailureRecord, { kind: 'stream' }>, now: number): string {
  const until = streamReadableUntil(record);
  const where = `${record.shardId ?? '?'} ${record.startSequenceNumber ?? '?'}..${record.endSequenceNumber ?? '?'}`;
  const readable =
    until === undefined
      ? 'arrival unknown'
      : until > now
        ? `still in the stream until ${new Date(until).toISOString()}`
        : `expired from the stream at ${new Date(until).toISOString()}`;
  return `stream batch (${where}, ${record.batchSize ?? '?'} records, ${readable}): the record does not carry the batch`;
}
