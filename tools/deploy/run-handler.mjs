// A warm Lambda container without Docker, for code downloaded from a deployment (test/aws/).
//
//   node tools/deploy/run-handler.mjs <task root> <handler>
//
// Loads <task root>/<file>.js of <handler> (`functions/health/healthcheck.handler`) once, as Lambda's
// Node.js runtime does from /var/task, then runs one invocation per line of standard input
// ({"event": …}) in order, in this same process: module state and caches live on between invocations,
// as in a warm container. Each answer is one JSON line on file descriptor 3:
//   {"ok":true,"result":…,"ms":12} or {"ok":false,"error":{"name":…,"message":…},"ms":3}
// so the function's own logs (stdout, stderr) stay apart. The environment is the caller's: it passes
// the function's configuration plus what Lambda's runtime adds (AWS_LAMBDA_FUNCTION_NAME, AWS_REGION…).
// End of input ends the process, whatever the function left open (Lambda freezes it; here it exits).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import readline from 'node:readline';
import { randomUUID } from 'node:crypto';

const [taskRoot, handlerSpec] = process.argv.slice(2);
if (!taskRoot || !handlerSpec) {
  process.stderr.write('usage: node run-handler.mjs <task root> <file>.<export>\n');
  process.exit(2);
}
const dot = handlerSpec.lastIndexOf('.');
const file = path.resolve(taskRoot, handlerSpec.slice(0, dot));
const exportName = handlerSpec.slice(dot + 1);
const answers = fs.createWriteStream(null, { fd: 3 });
const answer = (line) => new Promise((resolve) => answers.write(`${JSON.stringify(line)}\n`, resolve));

process.chdir(taskRoot);
const load = Date.now();
const handler = createRequire(path.join(taskRoot, 'index.js'))(file)[exportName];
if (typeof handler !== 'function') {
  await answer({ ok: false, error: { name: 'HandlerNotFound', message: `${handlerSpec} exports no function` } });
  process.exit(1);
}
await answer({ loaded: true, ms: Date.now() - load, node: process.version });

const name = process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'local';
const timeoutMs = Number(process.env.TSS_RUNNER_TIMEOUT_MS ?? 30_000);
for await (const line of readline.createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const { event } = JSON.parse(line);
  const began = Date.now();
  const context = {
    functionName: name,
    functionVersion: process.env.AWS_LAMBDA_FUNCTION_VERSION ?? '$LATEST',
    invokedFunctionArn: process.env.TSS_RUNNER_FUNCTION_ARN ?? name,
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE ?? '256',
    awsRequestId: randomUUID(),
    logGroupName: process.env.AWS_LAMBDA_LOG_GROUP_NAME ?? `/aws/lambda/${name}`,
    logStreamName: 'run-handler',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, began + timeoutMs - Date.now()),
    done() {},
    fail() {},
    succeed() {},
  };
  try {
    const result = await handler(event, context);
    await answer({ ok: true, result: result ?? null, ms: Date.now() - began });
  } catch (err) {
    await answer({ ok: false, error: { name: err?.name, message: err?.message }, ms: Date.now() - began });
  }
}
await new Promise((resolve) => answers.end(resolve));
process.exit(0);
