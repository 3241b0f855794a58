import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for Lambda's Runtime API (the 2018-06-01 interface a runtime polls; AWS's "Using the Lambda runtime API
 * for custom runtimes"), enough to drive a function image's own runtime client from a test
 * (test/images/scan-image.test.ts): `GET /runtime/invocation/next` waits for an event the test queues and answers it
 * with the headers Lambda sends (request id, deadline, function ARN, trace id); `POST /runtime/invocation/<id>/response`
 * and `/error` settle that invocation; `POST /runtime/init/error` records a failed start. Anything else is a 404,
 * and a second answer for one invocation a 400, as Lambda's own.
 */

export interface Outcome {
  ok: boolean;
  /** The response body, parsed (a JSON value), or the error body ({errorType, errorMessage, ...}). */
  body: unknown;
  errorType?: string;
  ms: number;
}

export interface RuntimeApi {
  /** `host:port`, what AWS_LAMBDA_RUNTIME_API names. */
  address: string;
  /** Queues one event; resolves with the runtime's answer, rejects past `timeoutMs` or on an init error. */
  invoke(event: unknown, o?: { timeoutMs?: number; functionArn?: string }): Promise<Outcome>;
  /** How many times the runtime has asked for the next event (a started client asks at once). */
  polls(): number;
  initErrors: unknown[];
  /** Requests refused (unknown paths, second answers), for the test to see none happened. */
  refused: string[];
  close(): Promise<void>;
}

interface Pending {
  id: string;
  body: string;
  deadline: number;
  arn: string;
  began: number;
  settle: (o: Outcome) => void;
  fail: (e: Error) => void;
  timer: NodeJS.Timeout;
}

const PREFIX = '/2018-06-01/runtime';

export async function startRuntimeApi(): Promise<RuntimeApi> {
  const queue: Pending[] = [];
  const waiting: http.ServerResponse[] = [];
  const inFlight = new Map<string, Pending>();
  const done = new Set<string>();
  const initErrors: unknown[] = [];
  const refused: string[] = [];
  let polls = 0;

  const deliver = () => {
    while (queue.length && waiting.length) {
      const p = queue.shift()!;
      const res = waiting.shift()!;
      if (res.destroyed) {
        queue.unshift(p);
        continue;
      }
      inFlight.set(p.id, p);
      res
        .writeHead(200, {
          'content-type': 'application/json',
          'lambda-runtime-aws-request-id': p.id,
          'lambda-runtime-deadline-ms': String(p.deadline),
          'lambda-runtime-invoked-function-arn': p.arn,
          'lambda-runtime-trace-id': `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomUUID().replace(/-/g, '').slice(0, 24)};Parent=${randomUUID().replace(/-/g, '').slice(0, 16)};Sampled=0`,
        })
        .end(p.body);
    }
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = req.url ?? '';
      const text = Buffer.concat(chunks).toString('utf8');
      const parse = () => {
        try {
          return JSON.parse(text) as unknown;
        } catch {
          return text;
        }
      };
      if (req.method === 'GET' && url === `${PREFIX}/invocation/next`) {
        polls++;
        waiting.push(res);
        return deliver();
      }
      if (req.method === 'POST' && url === `${PREFIX}/init/error`) {
        initErrors.push(parse());
        for (const p of queue.splice(0)) {
          clearTimeout(p.timer);
          p.fail(new Error(`the runtime failed to start: ${text}`));
        }
        return void res.writeHead(202).end('{"status":"OK"}');
      }
      const m = /^\/2018-06-01\/runtime\/invocation\/([^/]+)\/(response|error)$/.exec(url);
      if (req.method === 'POST' && m) {
        const id = decodeURIComponent(m[1]);
        const p = inFlight.get(id);
        if (!p) {
          refused.push(`${req.method} ${url}: ${done.has(id) ? 'already answered' : 'no such invocation'}`);
          return void res.writeHead(400).end('{"errorType":"InvalidRequestID"}');
        }
        inFlight.delete(id);
        done.add(id);
        clearTimeout(p.timer);
        const errorType = req.headers['lambda-runtime-function-error-type'] as string | undefined;
        p.settle({ ok: m[2] === 'response', body: parse(), errorType, ms: Date.now() - p.began });
        return void res.writeHead(202).end('{"status":"OK"}');
      }
      refused.push(`${req.method} ${url}`);
      res.writeHead(404).end();
    });
  });
  // The runtime's long poll may wait as long as the test does.
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    address: `127.0.0.1:${port}`,
    invoke(event, o = {}) {
      const timeoutMs = o.timeoutMs ?? 60_000;
      return new Promise<Outcome>((resolve, reject) => {
        const p: Pending = {
          id: randomUUID(),
          body: JSON.stringify(event),
          deadline: Date.now() + timeoutMs,
          arn: o.functionArn ?? 'arn:aws:lambda:us-east-1:000000000000:function:image-test',
          began: Date.now(),
          settle: resolve,
          fail: reject,
          timer: setTimeout(() => {
            const i = queue.indexOf(p);
            if (i >= 0) queue.splice(i, 1);
            inFlight.delete(p.id);
            reject(new Error(`no answer within ${timeoutMs} ms (polls so far: ${polls})`));
          }, timeoutMs),
        };
        queue.push(p);
        deliver();
      });
    },
    polls: () => polls,
    initErrors,
    refused,
    async close() {
      for (const p of [...queue.splice(0), ...inFlight.values()]) {
        clearTimeout(p.timer);
        p.fail(new Error('the Runtime API closed before an answer'));
      }
      inFlight.clear();
      for (const res of waiting.splice(0)) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
