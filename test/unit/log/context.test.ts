import { createLogger, invocationScope, runInvocation } from '../../../lib/log';
import { currentInvocation, traceRoot } from '../../../lib/log/context';
import { MAX_CAUSE_DEPTH, MAX_STACK_LINES } from '../../../lib/log/errors';

/** A parsed JSON line, walked freely in assertions. */
type Json = ReturnType<typeof JSON.parse>;

/**
 * The invocation's fields on every line (lib/log/context.ts): request id,
 * function, cold start, trace id; set by the handler builders' scope, fresh
 * per call, never seen outside it or by a concurrent call.
 */

const TRACE = 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1';

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger({ domain: 'test' }, { write: (l) => lines.push(JSON.parse(l)), now: () => 0 });
  return { lines, log };
}

const context = (id: string) => ({ awsRequestId: id, functionName: 'torrent-scan-sync-test-fn' });

afterEach(() => {
  delete process.env._X_AMZN_TRACE_ID;
});

describe('the invocation scope', () => {
  it('puts the request id, function, cold start (true, then false) and trace id on every line', async () => {
    const { lines, log } = capture();
    const handler = invocationScope(async (event: { n: number }) => {
      log.info('first', { n: event.n });
      await new Promise((r) => setTimeout(r, 1));
      log.child({ job_id: 'j' }).warn('second');
    });
    process.env._X_AMZN_TRACE_ID = TRACE;
    await handler({ n: 1 }, context('req-1'));
    delete process.env._X_AMZN_TRACE_ID;
    await handler({ n: 2 }, context('req-2'));

    expect(lines).toEqual([
      expect.objectContaining({
        event: 'first',
        request_id: 'req-1',
        function: 'torrent-scan-sync-test-fn',
        cold_start: true,
        trace_id: '1-5759e988-bd862e3fe1be46a994272793',
        domain: 'test',
        n: 1,
      }),
      expect.objectContaining({ event: 'second', request_id: 'req-1', cold_start: true, job_id: 'j' }),
      expect.objectContaining({ event: 'first', request_id: 'req-2', cold_start: false, n: 2 }),
      expect.objectContaining({ event: 'second', request_id: 'req-2', cold_start: false }),
    ]);
    // Reset per invocation: the second one has no trace id left over from the first.
    expect(lines[2]).not.toHaveProperty('trace_id');
  });

  it('keeps each of two concurrent invocations in one process apart, and nothing leaks outside', async () => {
    const { lines, log } = capture();
    const handler = invocationScope(async (event: { wait: number; name: string }) => {
      await new Promise((r) => setTimeout(r, event.wait));
      log.info('done', { name: event.name });
      // Work left running after the answer keeps its own invocation.
      setTimeout(() => log.info('later', { name: event.name }), event.wait);
    });
    await Promise.all([
      handler({ wait: 20, name: 'a' }, context('req-a')),
      handler({ wait: 5, name: 'b' }, context('req-b')),
    ]);
    await new Promise((r) => setTimeout(r, 40));
    log.info('outside');
    const byName = (event: string, name: string) => lines.find((l) => l.event === event && l.name === name);
    expect(byName('done', 'a')).toMatchObject({ request_id: 'req-a' });
    expect(byName('done', 'b')).toMatchObject({ request_id: 'req-b' });
    expect(byName('later', 'a')).toMatchObject({ request_id: 'req-a' });
    expect(byName('later', 'b')).toMatchObject({ request_id: 'req-b' });
    const outside = lines.find((l) => l.event === 'outside')!;
    expect(outside).not.toHaveProperty('request_id');
    expect(outside).not.toHaveProperty('cold_start');
    expect(currentInvocation()).toBeUndefined();
  });

  it('a provisioned-concurrency environment is never cold; a context without ids is tolerated', async () => {
    const { lines, log } = capture();
    process.env.AWS_LAMBDA_INITIALIZATION_TYPE = 'provisioned-concurrency';
    try {
      const handler = invocationScope(async () => log.info('x'));
      await handler(undefined);
    } finally {
      delete process.env.AWS_LAMBDA_INITIALIZATION_TYPE;
    }
    expect(lines[0]).toMatchObject({ cold_start: false });
    expect(lines[0]).not.toHaveProperty('request_id');
  });

  it('an HTTP API event adds its own request id and the principal the authorizer resolved', async () => {
    const { lines, log } = capture();
    const handler = invocationScope(async () => log.info('x'));
    await handler(
      { requestContext: { requestId: 'Y2kFYj3KoAMEVqw=', authorizer: { lambda: { principal: 'ops@example' } } } },
      context('req-api'),
    );
    await handler(
      { requestContext: { requestId: '<script>', authorizer: { lambda: { principal: 42 } } } },
      context('r'),
    );
    expect(lines[0]).toMatchObject({
      request_id: 'req-api',
      api_request_id: 'Y2kFYj3KoAMEVqw=',
      principal: 'ops@example',
    });
    expect(lines[1]).not.toHaveProperty('api_request_id');
    expect(lines[1]).not.toHaveProperty('principal');
  });

  it('reads only the Root of the trace header', () => {
    expect(traceRoot(TRACE)).toBe('1-5759e988-bd862e3fe1be46a994272793');
    expect(traceRoot('Parent=1;Sampled=0')).toBeUndefined();
    expect(traceRoot('Root=<script>')).toBeUndefined();
    expect(traceRoot(undefined)).toBeUndefined();
  });
});

describe('errors on a line', () => {
  it('carry their stack and their cause chain, each cause with its own stack and code', () => {
    const { lines, log } = capture();
    const root = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), { code: 'ECONNREFUSED' });
    const middle = new Error('the store is unreachable', { cause: root });
    const top = new TypeError('poll failed', { cause: middle });
    runInvocation({ request_id: 'r', cold_start: false }, () => log.error('poll_failed', { err: top }));
    const err = lines[0].err as Json;
    expect(err).toMatchObject({
      name: 'TypeError',
      message: 'poll failed',
      stack: expect.stringMatching(/^TypeError: poll failed\n {4}at .*context\.test\.ts/),
      cause: {
        name: 'Error',
        message: 'the store is unreachable',
        stack: expect.stringContaining('at '),
        cause: { name: 'Error', message: 'connect ECONNREFUSED 127.0.0.1:8000', code: 'ECONNREFUSED' },
      },
    });
    expect(lines[0]).toMatchObject({ request_id: 'r', event: 'poll_failed', level: 'error' });
  });

  it('bound the chain, the stack, and a cycle; a thrown non-Error is described, never copied', () => {
    const { lines, log } = capture();
    let chain: Error = new Error('deepest');
    for (let i = 0; i < 20; i++) chain = new Error(`level ${i}`, { cause: chain });
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    (a as { cause?: unknown }).cause = b;
    const deep = new Error('deep stack');
    deep.stack = ['Error: deep stack', ...Array.from({ length: 100 }, (_, i) => `    at f${i} (x.js:1:1)`)].join('\n');
    const odd = new Error('odd', { cause: { password: 'should-not-be-copied', nested: { x: 1 } } });
    log.error('e', { chain, cycle: b, deep, odd, primitive: new Error('p', { cause: 42 }) });

    let depth = 0;
    let node = lines[0].chain as Json;
    while (node.cause) {
      node = node.cause;
      depth++;
    }
    expect(depth).toBe(MAX_CAUSE_DEPTH);
    expect(node.truncated).toBe(true);
    expect((lines[0].cycle as Json).cause.truncated).toBe(true);
    expect((lines[0].deep as Json).stack.split('\n')).toHaveLength(MAX_STACK_LINES + 1);
    expect((lines[0].odd as Json).cause).toEqual({ value: '[object]' });
    expect(JSON.stringify(lines[0])).not.toContain('should-not-be-copied');
    expect((lines[0].primitive as Json).cause).toEqual({ value: '42' });
  });

  it('keep the errors of an AggregateError', () => {
    const { lines, log } = capture();
    log.error('e', { err: new AggregateError([new Error('one'), new RangeError('two')], 'both') });
    expect((lines[0].err as Json).errors).toEqual([
      expect.objectContaining({ name: 'Error', message: 'one' }),
      expect.objectContaining({ name: 'RangeError', message: 'two' }),
    ]);
  });
});
