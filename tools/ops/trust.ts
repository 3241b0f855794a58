import type { AsyncFailure } from './failure-record';

/**
 * Which failure records the replay may act on (docs/operations.md#replaying-failed-invocations).
 * A record is a message on a queue: whatever it names, the replay would
 * invoke under the operator's credentials. So a record is replayed only when
 * it is Lambda's own record (its shape, failure-record.ts), of a function of
 * THIS stage, in this account and region, that is asynchronous by design; and
 * it is replayed to that function only, unqualified, with its payload. An
 * HTTP function (`syncConnections`, `downloadsCreate`…) is never replayable,
 * whatever its record says: its event would carry an authorizer context the
 * record could invent (lib/http/middlewares.ts trusts it, as it must trust
 * API Gateway). Who may put a record on the queue at all is the queue's
 * policy and the functions' roles (plugins/aws-access/iam.js, decision 380).
 */

/**
 * The functions invoked asynchronously by design: the schedules, the NATS-bridged ones, the tick's shards
 * and the steps (serverless.yml gives each an on-failure destination; test/unit/deploy/template.test.ts
 * compares this list with the template's asynchronous functions).
 */
export const REPLAYABLE_FUNCTIONS = [
  'natsPing',
  'downloadsPoll',
  'scanRequest',
  'scanPoll',
  'syncTick',
  'syncTickShard',
  'syncStep',
] as const;

export interface ReplayTrust {
  region: string;
  /** The account of the failure queue (its URL names it); undefined: unknown, and nothing is replayed. */
  account?: string;
  /** `<service>-<stage>-`. */
  functionPrefix: string;
  functions: readonly string[];
}

/** Why a record must not be replayed; undefined when it may. */
export function replayRefusal(record: AsyncFailure, trust: ReplayTrust): string | undefined {
  if (record.notLambda) return `not Lambda's record: ${record.notLambda}`;
  const [, partition, , region, account] = record.functionArn.split(':');
  if (!/^aws(-[a-z]+)*$/.test(partition ?? '')) return `not an AWS ARN: ${record.functionArn}`;
  if (region !== trust.region) return `names region ${region}, not ${trust.region}`;
  if (!trust.account) return 'the queue URL names no account to check the record against';
  if (account !== trust.account) return `names account ${account}, not the queue's ${trust.account}`;
  if (record.qualifier !== undefined) return `names version or alias ${record.qualifier}: only $LATEST is replayed`;
  const key = record.functionName.startsWith(trust.functionPrefix)
    ? record.functionName.slice(trust.functionPrefix.length)
    : undefined;
  if (key === undefined) return `names ${record.functionName}, not a function of ${trust.functionPrefix}*`;
  if (!trust.functions.includes(key))
    return `names ${key}, which is not invoked asynchronously (replayable: ${trust.functions.join(', ')})`;
  return undefined;
}

/** The account a queue URL names (`https://sqs.<region>.amazonaws.com/<account>/<name>`, moto's too). */
export function accountOfQueueUrl(url: string): string | undefined {
  try {
    const account = new URL(url).pathname.split('/')[1];
    return /^\d{12}$/.test(account ?? '') ? account : undefined;
  } catch {
    return undefined;
  }
}
