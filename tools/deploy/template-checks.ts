/**
 * The rules a deployable template must keep (docs/deploy.md), checked on the
 * CloudFormation that `serverless package` produces
 * (test/unit/deploy/template.test.ts). Each rule is a pure function of the
 * template and the packaged functions, returning its violations, so a test can
 * break each rule on a copy of the template and see it reported.
 */

import { PUBLIC_ROUTES } from '../../lib/auth/scopes';
import { runtimeRefusal } from './runtimes';
import { checkFailureQueue } from './failure-queue-checks';
import { Cfn, functionLogicalId, of, TemplateContext, Violation } from './template';
import { checkIam, checkKeys, checkPublicFunctions, checkRoles } from './iam-checks';
import { checkLoopback, checkSecrets } from './secret-checks';

const DEV_STAGES = new Set(['dev', 'test']);

export function checkAuthorizer(t: Cfn): Violation[] {
  const out: Violation[] = [];
  const routes = of(t, 'AWS::ApiGatewayV2::Route');
  if (routes.length === 0) out.push({ rule: 'authorizer', message: 'no HTTP routes in the template' });
  for (const [id, r] of routes) {
    // The one list of routes without an authorizer, each with its reason (healthcheck, sign-in, the webhook).
    const open = PUBLIC_ROUTES.includes(r.Properties.RouteKey);
    const guarded = r.Properties.AuthorizationType === 'CUSTOM' && r.Properties.AuthorizerId !== undefined;
    if (!open && !guarded)
      out.push({ rule: 'authorizer', message: `${id} (${r.Properties.RouteKey}) has no authorizer` });
    if (open && guarded)
      out.push({
        rule: 'authorizer',
        message: `${r.Properties.RouteKey} must stay open (lib/auth/scopes.ts PUBLIC_ROUTES says why)`,
      });
  }
  return out;
}
/** Functions invoked asynchronously: schedules and NATS (bridged as `Event`), and those another function invokes. */
export function asyncFunctions(t: Cfn, ctx: TemplateContext): string[] {
  const invoked = new Set<string>();
  for (const [, role] of of(t, 'AWS::IAM::Role')) {
    for (const policy of role.Properties.Policies ?? [])
      for (const st of policy.PolicyDocument.Statement)
        if ([st.Action].flat().includes('lambda:InvokeFunction'))
          for (const res of [st.Resource].flat()) {
            const parts = (res as any)?.['Fn::Join']?.[1];
            if (Array.isArray(parts)) invoked.add(String(parts[parts.length - 1]));
          }
  }
  return Object.entries(ctx.functions)
    .filter(([, f]) => invoked.has(f.name) || (f.events ?? []).some((e) => 'schedule' in e || 'nats' in e))
    .map(([key]) => key);
}

export function checkOnFailure(t: Cfn, ctx: TemplateContext): Violation[] {
  const configured = new Set(
    of(t, 'AWS::Lambda::EventInvokeConfig')
      .filter(([, r]) => r.Properties.DestinationConfig?.OnFailure?.Destination)
      .map(([, r]) => r.Properties.FunctionName?.Ref),
  );
  return asyncFunctions(t, ctx)
    .filter((key) => !configured.has(functionLogicalId(key)))
    .map((key) => ({
      rule: 'on-failure' as const,
      message: `${key} is invoked asynchronously but has no on-failure destination`,
    }));
}

export function checkTables(t: Cfn, ctx: TemplateContext): Violation[] {
  const out: Violation[] = [];
  for (const [id, r] of of(t, 'AWS::DynamoDB::Table')) {
    if (r.Properties.PointInTimeRecoverySpecification?.PointInTimeRecoveryEnabled !== true)
      out.push({ rule: 'tables', message: `${id} has no point-in-time recovery` });
    if (!DEV_STAGES.has(ctx.stage) && r.Properties.DeletionProtectionEnabled !== true)
      out.push({ rule: 'tables', message: `${id} has no deletion protection in stage ${ctx.stage}` });
  }
  return out;
}

export function checkBuckets(t: Cfn): Violation[] {
  const out: Violation[] = [];
  for (const [id, r] of of(t, 'AWS::S3::Bucket')) {
    const block = r.Properties?.PublicAccessBlockConfiguration ?? {};
    for (const flag of ['BlockPublicAcls', 'BlockPublicPolicy', 'IgnorePublicAcls', 'RestrictPublicBuckets'])
      if (block[flag] !== true) out.push({ rule: 'bucket', message: `${id}: ${flag} is not set` });
    const sse =
      r.Properties?.BucketEncryption?.ServerSideEncryptionConfiguration?.[0]?.ServerSideEncryptionByDefault
        ?.SSEAlgorithm;
    if (!sse) out.push({ rule: 'bucket', message: `${id} is not encrypted` });
    if (!tlsOnly(t, id)) out.push({ rule: 'bucket', message: `${id} has no policy refusing requests without TLS` });
  }
  return out;
}

/** A bucket policy of the bucket denies every request without TLS, on the bucket and on its objects. */
function tlsOnly(t: Cfn, bucketId: string): boolean {
  return of(t, 'AWS::S3::BucketPolicy')
    .filter(([, p]) => p.Properties?.Bucket?.Ref === bucketId)
    .some(([, p]) =>
      (p.Properties.PolicyDocument?.Statement ?? []).some(
        (st: any) =>
          st.Effect === 'Deny' &&
          st.Principal === '*' &&
          [st.Action].flat().some((a: string) => a === 's3:*') &&
          String(st.Condition?.Bool?.['aws:SecureTransport']) === 'false' &&
          [st.Resource].flat().length === 2,
      ),
    );
}
/** Functions consuming a DynamoDB stream (the bot's notifier), by key. */
export function streamConsumers(ctx: TemplateContext): string[] {
  return Object.entries(ctx.functions)
    .filter(([, f]) =>
      (f.events ?? []).some(
        (e) =>
          e.stream &&
          (typeof e.stream === 'string' ||
            e.stream.type === 'dynamodb' ||
            /dynamodb/.test(JSON.stringify(e.stream.arn ?? ''))),
      ),
    )
    .map(([key]) => key);
}

export function checkStream(t: Cfn, ctx: TemplateContext): Violation[] {
  const out: Violation[] = [];
  const mappings = of(t, 'AWS::Lambda::EventSourceMapping');
  for (const key of streamConsumers(ctx)) {
    const id = functionLogicalId(key);
    const mapping = mappings.find(([, m]) => JSON.stringify(m.Properties.FunctionName).includes(`"${id}"`));
    const table = mapping?.[1].Properties.EventSourceArn?.['Fn::GetAtt'];
    if (!mapping || !table || table[1] !== 'StreamArn') {
      out.push({ rule: 'stream', message: `${key}: no event source mapping from a table's StreamArn` });
      continue;
    }
    if (!t.Resources[table[0]]?.Properties?.StreamSpecification?.StreamViewType)
      out.push({ rule: 'stream', message: `${table[0]} has no stream enabled` });
    if (!mapping[1].Properties.DestinationConfig?.OnFailure?.Destination)
      out.push({ rule: 'stream', message: `${key}: stream mapping has no on-failure destination` });
  }
  return out;
}

/**
 * The connector's task role invokes exactly the functions with a `nats` event,
 * and its logs go to CloudWatch; without the connector, none of its resources.
 */
export function checkConnector(t: Cfn, ctx: TemplateContext): Violation[] {
  const out: Violation[] = [];
  const natsFunctions = Object.entries(ctx.functions)
    .filter(([, f]) => (f.events ?? []).some((e) => 'nats' in e))
    .map(([key]) => functionLogicalId(key))
    .sort();
  const task = of(t, 'AWS::ECS::TaskDefinition')[0];
  if (!task) {
    // Not deployed (NATS_CONNECTOR_DEPLOY unset): then none of its resources is in the template.
    const left = Object.entries(t.Resources).filter(
      ([id, r]) => r.Type.startsWith('AWS::ECS::') || id.startsWith('Connector'),
    );
    return left.map(([id]) => ({
      rule: 'connector' as const,
      message: `${id} is packaged without the connector's task`,
    }));
  }
  const roleId = task[1].Properties.TaskRoleArn?.['Fn::GetAtt']?.[0];
  const statements = (t.Resources[roleId]?.Properties?.Policies ?? []).flatMap((p: any) => p.PolicyDocument.Statement);
  const invokable = statements
    .filter((s: any) => [s.Action].flat().includes('lambda:InvokeFunction'))
    .flatMap((s: any) => [s.Resource].flat().map((r: any) => r?.['Fn::GetAtt']?.[0] ?? JSON.stringify(r)))
    .sort();
  if (JSON.stringify(invokable) !== JSON.stringify(natsFunctions))
    out.push({
      rule: 'connector',
      message: `task role invokes ${invokable.join(', ')}; the nats functions are ${natsFunctions.join(', ')}`,
    });
  if (statements.some((s: any) => ![s.Action].flat().every((a: string) => a === 'lambda:InvokeFunction')))
    out.push({ rule: 'connector', message: 'task role allows more than lambda:InvokeFunction' });
  for (const c of task[1].Properties.ContainerDefinitions)
    if (c.LogConfiguration?.LogDriver !== 'awslogs')
      out.push({ rule: 'connector', message: `${c.Name} does not log to CloudWatch` });
  return out;
}

/**
 * Every function (ours and the framework's custom resources) on a runtime AWS
 * supports for at least RUNTIME_NOTICE_DAYS more (tools/deploy/runtimes.ts).
 */
export function checkRuntimes(t: Cfn, ctx: Pick<TemplateContext, 'today'>): Violation[] {
  const today = ctx.today ?? new Date().toISOString().slice(0, 10);
  const functions = of(t, 'AWS::Lambda::Function');
  if (functions.length === 0) return [{ rule: 'runtime', message: 'no Lambda functions in the template' }];
  return functions.flatMap(([id, r]) => {
    const runtime = r.Properties?.Runtime;
    // A container image brings its own runtime: the scan image's base is Node.js 24 (images/scan/Dockerfile).
    if (r.Properties?.PackageType === 'Image') return [];
    if (typeof runtime !== 'string') return [{ rule: 'runtime' as const, message: `${id} names no runtime` }];
    const refusal = runtimeRefusal(runtime, today);
    return refusal ? [{ rule: 'runtime' as const, message: `${id}: ${refusal}` }] : [];
  });
}

export function checkTemplate(t: Cfn, ctx: TemplateContext): Violation[] {
  return [
    ...checkRuntimes(t, ctx),
    ...checkAuthorizer(t),
    ...checkIam(t, ctx),
    ...checkRoles(t, ctx),
    ...checkPublicFunctions(t, ctx),
    ...checkKeys(t, ctx),
    ...checkLoopback(t),
    ...checkOnFailure(t, ctx),
    ...checkFailureQueue(t, ctx),
    ...checkTables(t, ctx),
    ...checkBuckets(t),
    ...checkSecrets(t, ctx),
    ...checkStream(t, ctx),
    ...checkConnector(t, ctx),
  ];
}

/**
 * Each function's packaged zip (bundle and source map), in KiB: about 3 % above
 * its size when set (docs/deploy.md). A handler that grows past it, say by
 * pulling in another SDK client, fails the template test; raise a budget only
 * on purpose, in the commit that explains the growth. A new function needs one.
 */
export const BUNDLE_BUDGETS_KIB: Record<string, number> = {
  authorizer: 370,
  healthcheck: 800,
  natsPing: 590,
  downloadsCreate: 760,
  downloadsList: 720,
  downloadsGet: 600,
  downloadsRetry: 622,
  downloadsState: 720,
  downloadsInfohashes: 720,
  downloadsKeepWaiting: 720,
  downloadsPoll: 628,
  webPages: 810,
  webActions: 820,
  webSignIn: 560,
  webConsole: 850,
  webConsoleRetry: 1000,
  scanRequest: 1000,
  scanPoll: 1000,
  syncTick: 730,
  syncTickShard: 730,
  syncStep: 750,
  syncConnections: 850,
  syncReseal: 660,
  syncConnectionDelete: 730,
  syncHourly: 730,
  syncAttempt: 730,
  syncOperations: 850,
  syncPortfolio: 700,
  syncCalendar: 820,
  syncExport: 825,
  syncFeedTokens: 700,
  syncCalendarFeed: 820,
  apiDocument: 142,
  telegramNotify: 860,
  telegramWebhook: 960,
  telegramFailures: 570,
};

/** Packaged sizes (bytes, by function key) against their budgets: over budget, no budget, or a budget for nothing. */
export function checkBundles(
  sizes: Record<string, number>,
  ctx: TemplateContext,
  budgetsKib: Record<string, number> = BUNDLE_BUDGETS_KIB,
): Violation[] {
  const out: Violation[] = [];
  for (const key of Object.keys(ctx.functions)) {
    const size = sizes[key];
    const budget = budgetsKib[key];
    if (size === undefined) out.push({ rule: 'bundle', message: `${key} has no packaged zip` });
    else if (budget === undefined)
      out.push({ rule: 'bundle', message: `${key} (${kib(size)} KiB) has no bundle budget` });
    else if (size > budget * 1024)
      out.push({ rule: 'bundle', message: `${key} is ${kib(size)} KiB, over its budget of ${budget} KiB` });
  }
  for (const key of Object.keys(budgetsKib)) {
    if (!(key in ctx.functions))
      out.push({ rule: 'bundle', message: `a bundle budget names ${key}, which is no function` });
  }
  return out;
}

const kib = (bytes: number) => (bytes / 1024).toFixed(0);
