/**
 * The rules a deployable template must keep (docs/deploy.md), checked on the
 * CloudFormation that `serverless package` produces
 * (test/unit/deploy/template.test.ts). Each rule is a pure function of the
 * template and the packaged functions, returning its violations, so a test can
 * break each rule on a copy of the template and see it reported.
 */

import { PUBLIC_ROUTES } from '../../lib/auth/scopes';
import { runtimeRefusal } from './runtimes';

export type Cfn = {
  Resources: Record<string, { Type: string; Condition?: string; Properties?: any }>;
  Conditions?: Record<string, unknown>;
};

export interface PackagedFunction {
  name: string;
  events?: Array<Record<string, any>>;
}

export interface TemplateContext {
  service: string;
  stage: string;
  /** The packaged functions by key (serverless-state.json `service.functions`). */
  functions: Record<string, PackagedFunction>;
  /** Values planted in the packaging environment that must not appear anywhere in the template. */
  plantedSecrets: string[];
  /** The day of the check (YYYY-MM-DD) for the runtime rule; today when absent. */
  today?: string;
}

export interface Violation {
  rule: Rule;
  message: string;
}

export type Rule =
  'authorizer' | 'iam' | 'on-failure' | 'tables' | 'bucket' | 'secrets' | 'stream' | 'connector' | 'bundle' | 'runtime';

const DEV_STAGES = new Set(['dev', 'test']);
// Variables carrying a credential: each must be a Secrets Manager or SSM reference in the template.
const SECRET_VARIABLE = /(TOKEN|PASSWORD|SECRET|SEED|JWT|_KEYS$|^NATS_USER$)/;
const DYNAMIC_REFERENCE = /^\{\{resolve:(secretsmanager|ssm):[^}]+\}\}$/;

/** The serverless logical id of a function key (osls: first letter upper-cased, '-' and '_' spelled out). */
export function functionLogicalId(key: string): string {
  return `${key.charAt(0).toUpperCase()}${key.slice(1).replace(/-/g, 'Dash').replace(/_/g, 'Underscore')}LambdaFunction`;
}

const of = (t: Cfn, type: string) => Object.entries(t.Resources).filter(([, r]) => r.Type === type);

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

/**
 * Every resource of every IAM statement is one the stack owns: Ref/GetAtt of
 * its own logical ids, or an ARN naming this service-stage's functions or
 * secrets. No '*' but the framework's own log groups (`/aws/lambda/<service>-<stage>*`)
 * and object keys under the service's bucket.
 */
export function checkIam(t: Cfn, ctx: TemplateContext): Violation[] {
  const out: Violation[] = [];
  const prefix = `${ctx.service}-${ctx.stage}`;
  const own = new Set(Object.keys(t.Resources));
  const functionNames = new Set(Object.values(ctx.functions).map((f) => f.name));
  const buckets = new Set(of(t, 'AWS::S3::Bucket').map(([id]) => id));
  for (const [roleId, role] of of(t, 'AWS::IAM::Role')) {
    for (const policy of role.Properties.Policies ?? []) {
      for (const st of policy.PolicyDocument.Statement) {
        if (st.Effect !== 'Allow') continue;
        const actions: string[] = [st.Action].flat();
        for (const resource of [st.Resource].flat()) {
          const problem = resourceProblem(resource, actions, {
            own,
            functionNames,
            buckets,
            prefix,
            service: ctx.service,
            stage: ctx.stage,
          });
          if (problem)
            out.push({
              rule: 'iam',
              message: `${roleId} ${actions.join(',')}: ${problem}: ${JSON.stringify(resource)}`,
            });
        }
      }
    }
  }
  return out;
}

interface Owned {
  own: Set<string>;
  functionNames: Set<string>;
  buckets: Set<string>;
  prefix: string;
  service: string;
  stage: string;
}

function resourceProblem(resource: unknown, actions: string[], o: Owned): string | undefined {
  if (resource === '*') return 'wildcard resource';
  if (typeof resource === 'string')
    return resource.includes('*') ? 'wildcard in a literal ARN' : 'literal ARN not derived from the stack';
  const r = resource as Record<string, any>;
  if (r['Fn::GetAtt'])
    return o.own.has(r['Fn::GetAtt'][0]) ? undefined : `GetAtt of ${r['Fn::GetAtt'][0]}, not in this stack`;
  if (r.Ref) return o.own.has(r.Ref) ? undefined : `Ref of ${r.Ref}, not in this stack`;
  if (r['Fn::Sub']) {
    const text = String(r['Fn::Sub']);
    const logs = actions.every((a) => a.startsWith('logs:'));
    const ownLogs = text.includes(`:log-group:/aws/lambda/${o.prefix}*:`);
    return logs && ownLogs && !/\$\{(?!AWS::)/.test(text) ? undefined : 'Fn::Sub outside the framework log groups';
  }
  if (r['Fn::Join']) {
    const [sep, parts] = r['Fn::Join'] as [string, unknown[]];
    const literal = parts.filter((p): p is string => typeof p === 'string');
    const head = parts[0] as Record<string, any>;
    // <own table or bucket ARN>/<index/NAME or key prefix>
    if (sep === '/' && parts.length === 2 && head?.['Fn::GetAtt']) {
      const [id] = head['Fn::GetAtt'];
      const tail = String(parts[1]);
      if (!o.own.has(id)) return `ARN of ${id}, not in this stack`;
      if (o.buckets.has(id))
        return /^([\w.-]+\/)*\*$|^[\w./-]+$/.test(tail) ? undefined : 'bucket key pattern with an inner wildcard';
      return /^index\/[\w.-]+$/.test(tail) ? undefined : `${id}/${tail}: not an index named exactly`;
    }
    const name = literal[literal.length - 1];
    // arn:aws:lambda:<region>:<account>:function:<service>-<stage>-<fn>
    if (sep === ':' && literal.includes('function'))
      return o.functionNames.has(name) ? undefined : `function ${name} is not one of this service's`;
    // arn:<partition>:secretsmanager:<region>:<account>:secret:<service>/<stage>/<name>-?????? (the random suffix)
    if (sep === ':' && literal.includes('secretsmanager')) {
      return name.startsWith(`${o.service}/${o.stage}/`) && /^[\w/.-]+-\?{6}$/.test(name)
        ? undefined
        : `secret ${name} is not this stage's`;
    }
    return 'Fn::Join the checker cannot prove owned';
  }
  return 'unrecognised resource form';
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
  }
  return out;
}

export function checkSecrets(t: Cfn, ctx: TemplateContext): Violation[] {
  const out: Violation[] = [];
  const text = JSON.stringify(t);
  for (const planted of ctx.plantedSecrets)
    if (text.includes(planted))
      out.push({ rule: 'secrets', message: `a secret from the environment is written into the template` });
  for (const [id, r] of of(t, 'AWS::Lambda::Function')) {
    for (const [name, value] of Object.entries<unknown>(r.Properties.Environment?.Variables ?? {}))
      if (SECRET_VARIABLE.test(name) && !(typeof value === 'string' && DYNAMIC_REFERENCE.test(value)))
        out.push({ rule: 'secrets', message: `${id} ${name} is not a Secrets Manager/SSM reference` });
  }
  for (const [id, r] of of(t, 'AWS::ECS::TaskDefinition'))
    for (const c of r.Properties.ContainerDefinitions ?? [])
      for (const e of c.Environment ?? [])
        if (SECRET_VARIABLE.test(e.Name))
          out.push({ rule: 'secrets', message: `${id} ${e.Name} is plain task environment, not a secret` });
  return out;
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

/** The connector's task role invokes exactly the functions with a `nats` event, and its logs go to CloudWatch. */
export function checkConnector(t: Cfn, ctx: TemplateContext): Violation[] {
  const out: Violation[] = [];
  const natsFunctions = Object.entries(ctx.functions)
    .filter(([, f]) => (f.events ?? []).some((e) => 'nats' in e))
    .map(([key]) => functionLogicalId(key))
    .sort();
  const task = of(t, 'AWS::ECS::TaskDefinition')[0];
  if (!task) return [{ rule: 'connector', message: 'no connector task definition' }];
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
    ...checkOnFailure(t, ctx),
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
  authorizer: 20,
  healthcheck: 760,
  natsPing: 230,
  downloadsCreate: 690,
  downloadsList: 680,
  downloadsGet: 560,
  downloadsRetry: 560,
  downloadsState: 680,
  downloadsInfohashes: 680,
  downloadsPoll: 560,
  webPages: 690,
  webActions: 700,
  webSignIn: 150,
  webConsole: 630,
  webConsoleRetry: 860,
  scanRequest: 960,
  scanPoll: 960,
  syncTick: 610,
  syncTickShard: 610,
  syncStep: 620,
  syncConnections: 720,
  syncConnectionDelete: 610,
  syncHourly: 610,
  syncAttempt: 610,
  syncOperations: 720,
  telegramNotify: 820,
  telegramWebhook: 860,
  telegramFailures: 530,
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
