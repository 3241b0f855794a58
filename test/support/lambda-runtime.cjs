'use strict';
/**
 * One invocation of a packaged handler the way Lambda's Node.js runtime makes it, for running a function's
 * artefact without Lambda or Docker (test/integration/scan/smb-image.test.ts):
 *
 *   node lambda-runtime.cjs <event.json> <result.json> <timeout seconds>
 *
 * As in the image (whose entry point passes CMD on as `_HANDLER`), the handler is `_HANDLER`
 * (`functions/scan/request.handler`: a module path under LAMBDA_TASK_ROOT, then the export), loaded by the
 * runtime's rules (`.js`, `.mjs` or `.cjs`; CommonJS through require, ES modules through import) and called with
 * the event and a context carrying the function's name, memory, request id and remaining time. Its promise is
 * awaited: Node.js 24's runtime has no callback handlers. stdout and stderr are the function's log, as Lambda
 * sends them to CloudWatch; the outcome goes to <result.json> as `{ok, result | errorType, errorMessage, ms}`.
 * Past the timeout the invocation ends as Lambda ends it ("Task timed out"). One invocation, then the process
 * exits: where Lambda would freeze the container for the next one.
 */
const fs = require('node:fs');
const path = require('node:path');
const { randomUUID } = require('node:crypto');
const { pathToFileURL } = require('node:url');
const { setTimeout } = require('node:timers');

const [eventFile, resultFile, timeoutSeconds] = process.argv.slice(2);
const began = Date.now();
const deadline = began + Number(timeoutSeconds) * 1000;

function finish(outcome) {
  fs.writeFileSync(resultFile, JSON.stringify({ ...outcome, ms: Date.now() - began }));
  process.exit(0);
}

async function loadHandler(taskRoot, handler) {
  const dot = handler.lastIndexOf('.');
  if (dot < 1) throw Object.assign(new Error(`Bad handler ${handler}`), { name: 'Runtime.MalformedHandlerName' });
  const base = path.resolve(taskRoot, handler.slice(0, dot));
  const file = ['.js', '.mjs', '.cjs'].map((ext) => base + ext).find((f) => fs.existsSync(f));
  if (!file) throw Object.assign(new Error(`Cannot find module '${base}'`), { name: 'Runtime.ImportModuleError' });
  const mod = file.endsWith('.mjs') ? await import(pathToFileURL(file).href) : require(file);
  const fn = handler
    .slice(dot + 1)
    .split('.')
    .reduce((o, key) => (o == null ? undefined : o[key]), mod);
  if (typeof fn !== 'function')
    throw Object.assign(new Error(`${handler} is undefined or not exported`), { name: 'Runtime.HandlerNotFound' });
  return fn;
}

async function main() {
  const env = process.env;
  const name = env.AWS_LAMBDA_FUNCTION_NAME;
  const context = {
    callbackWaitsForEmptyEventLoop: true,
    functionName: name,
    functionVersion: env.AWS_LAMBDA_FUNCTION_VERSION,
    invokedFunctionArn: `arn:aws:lambda:${env.AWS_REGION}:000000000000:function:${name}`,
    memoryLimitInMB: env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
    awsRequestId: randomUUID(),
    logGroupName: env.AWS_LAMBDA_LOG_GROUP_NAME,
    logStreamName: env.AWS_LAMBDA_LOG_STREAM_NAME,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
  const handler = await loadHandler(env.LAMBDA_TASK_ROOT, env._HANDLER);
  const event = JSON.parse(fs.readFileSync(eventFile, 'utf8'));
  // Lambda's runtime holds the process open while it waits for the handler; so does this timer.
  setTimeout(
    () =>
      finish({
        ok: false,
        errorType: 'Sandbox.Timedout',
        errorMessage: `Task timed out after ${timeoutSeconds} seconds`,
      }),
    Math.max(0, deadline - Date.now()),
  );
  const result = await handler(event, context);
  finish({ ok: true, result: result === undefined ? null : result });
}

main().catch((err) =>
  finish({ ok: false, errorType: (err && err.name) || 'Error', errorMessage: String((err && err.message) || err) }),
);
