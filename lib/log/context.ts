import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The invocation a log line (or a metric) belongs to: every line written while
 * a handler runs carries its Lambda request id, function name, cold-start flag
 * and X-Ray trace id, whichever logger wrote it (the domains' loggers are built
 * once per container, at module scope).
 *
 * The scope is an AsyncLocalStorage entered with `run` around the whole
 * handler by `invocationScope`, which every handler builder applies
 * (lib/http, lib/web, lib/lambda; the authorizer and the healthcheck
 * directly): a fresh scope per call, so nothing of one invocation is seen by
 * the next, and two invocations running at once in one process (serverless
 * offline runs every handler in its own process, and Lambda Managed Instances
 * run several per environment) each see their own. Work an invocation starts
 * and leaves running (a timer, an unawaited promise) keeps its scope.
 * docs/decisions.md, 270.
 */

export interface InvocationFields {
  request_id?: string;
  function?: string;
  cold_start: boolean;
  /** The X-Ray trace's root id (`1-5759e988-bd862e3fe1be46a994272793`), when Lambda gave one. */
  trace_id?: string;
  /** An HTTP API request's own id (the access log's `requestId`), when the event came through the API. */
  api_request_id?: string;
  /** Who the authorizer resolved the request to (a grant's name), when it did. */
  principal?: string;
}

export interface Invocation {
  readonly fields: InvocationFields;
  /** Values met during this invocation that no line may print (a bearer token, a brokerage token): redact.ts. */
  readonly secrets: Set<string>;
}

/** What the scope reads of Lambda's context object (a test may pass none). */
export interface LambdaContextLike {
  awsRequestId?: string;
  functionName?: string;
}

const scope = new AsyncLocalStorage<Invocation>();

/** The invocation running now, if any (none at module load, in a CLI, in a unit test outside a scope). */
export function currentInvocation(): Invocation | undefined {
  return scope.getStore();
}

/** `Root=1-…;Parent=…;Sampled=1` → `1-…`; undefined when tracing gave no header. */
export function traceRoot(header: string | undefined): string | undefined {
  const root = header
    ?.split(';')
    .map((part) => part.trim())
    .find((part) => part.startsWith('Root='));
  const id = root?.slice('Root='.length);
  return id && /^[0-9a-f-]{1,64}$/i.test(id) ? id : undefined;
}

/** Runs `body` as one invocation with these fields; what it starts keeps the scope. */
export function runInvocation<T>(fields: InvocationFields, body: () => T): T {
  return scope.run({ fields, secrets: new Set() }, body);
}

/**
 * Wraps a Lambda handler so each call runs in its own scope. The first call
 * of the wrapped handler is the cold start: one handler per bundle, so per
 * execution environment (a provisioned-concurrency environment was started
 * before any request and is not cold).
 */
export function invocationScope<E, C, R, Rest extends unknown[]>(
  handler: (event: E, context: C, ...rest: Rest) => R,
): (event: E, context?: C, ...rest: Rest) => R {
  let cold = process.env.AWS_LAMBDA_INITIALIZATION_TYPE !== 'provisioned-concurrency';
  return (event, context, ...rest) => {
    const lambda = (context ?? {}) as LambdaContextLike;
    const fields: InvocationFields = {
      request_id: typeof lambda.awsRequestId === 'string' ? lambda.awsRequestId : undefined,
      function: typeof lambda.functionName === 'string' ? lambda.functionName : process.env.AWS_LAMBDA_FUNCTION_NAME,
      cold_start: cold,
      trace_id: traceRoot(process.env._X_AMZN_TRACE_ID),
      ...fromApiEvent(event),
    };
    cold = false;
    return runInvocation(fields, () => handler(event, context as C, ...rest));
  };
}

const SHORT_TEXT = /^[A-Za-z0-9._@=:-]{1,128}$/;

/** An HTTP API event's request id and resolved principal (payload 2.0); nothing for other events. */
function fromApiEvent(event: unknown): Pick<InvocationFields, 'api_request_id' | 'principal'> {
  const context = (
    event as { requestContext?: { requestId?: unknown; authorizer?: { lambda?: { principal?: unknown } } } }
  )?.requestContext;
  const id = context?.requestId;
  const principal = context?.authorizer?.lambda?.principal;
  return {
    ...(typeof id === 'string' && SHORT_TEXT.test(id) ? { api_request_id: id } : {}),
    ...(typeof principal === 'string' && SHORT_TEXT.test(principal) ? { principal } : {}),
  };
}
