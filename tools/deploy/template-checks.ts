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
  Resources: Record<
    string,
    { Type: string; Condition?: string; Properties?: any; DependsOn?: string | string[]; [key: string]: any }
  >;
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
  /** custom.secretCatalog: each secret's name and the variables it fills (a JSON key, or '' for the whole string). */
  secretCatalog: Record<string, Record<string, string>>;
  /** The day of the check (YYYY-MM-DD) for the runtime rule; today when absent. */
  today?: string;
}

export interface Violation {
  rule: Rule;
  message: string;
}

export type Rule =
  | 'authorizer'
  | 'iam'
  | 'roles'
  | 'access'
  | 'public'
  | 'keys'
  | 'loopback'
  | 'on-failure'
  | 'tables'
  | 'bucket'
  | 'secrets'
  | 'stream'
  | 'connector'
  | 'bundle'
  | 'runtime';

const DEV_STAGES = new Set(['dev', 'test']);
// Names that say "credential": such a variable is never in a function's configuration, only
// `<VAR>_SECRET_ID`, the name of the secret holding it (lib/secrets/runtime.ts reads it at run time).
const SECRET_VARIABLE = /(TOKEN|PASSWORD|SECRET|SEED|JWT|API_KEY|_KEYS$|^NATS_USER$)/;
// Variables whose names look like a credential and are not one, each with what it must be.
const NOT_SECRET: Record<string, (value: unknown, t: Cfn) => boolean> = {
  // How long a secret read at run time is kept (lib/secrets/runtime.ts): seconds, or empty for its default.
  SECRETS_CACHE_SECONDS: (value) => typeof value === 'string' && /^\d{0,4}$/.test(value),
  // The KMS key that seals brokerage tokens: its ARN, from the stack's own key.
  SYNC_TOKEN_KMS_KEY: (value, t) => {
    const id = (value as any)?.['Fn::GetAtt']?.[0];
    return typeof id === 'string' && t.Resources[id]?.Type === 'AWS::KMS::Key';
  },
};
// X-Ray's write actions, which take no resource: a traced function's role grants them on '*'.
const XRAY_ACTIONS = new Set(['xray:PutTraceSegments', 'xray:PutTelemetryRecords']);
// EC2's ENI actions, which Lambda needs for a function in a VPC and EC2 scopes to no resource Lambda names.
const VPC_ACTIONS = new Set([
  'ec2:CreateNetworkInterface',
  'ec2:DescribeNetworkInterfaces',
  'ec2:DescribeSubnets',
  'ec2:DeleteNetworkInterface',
  'ec2:AssignPrivateIpAddresses',
  'ec2:UnassignPrivateIpAddresses',
]);

/** The serverless logical id of a function key (osls: first letter upper-cased, '-' and '_' spelled out). */
export function functionLogicalId(key: string): string {
  return `${key.charAt(0).toUpperCase()}${key.slice(1).replace(/-/g, 'Dash').replace(/_/g, 'Underscore')}LambdaFunction`;
}

export const of = (t: Cfn, type: string) => Object.entries(t.Resources).filter(([, r]) => r.Type === type);

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
 * secrets. No '*' but object keys under the service's bucket, and EC2's ENI
 * actions (a function in a VPC), which EC2 cannot scope.
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
        if (st.Resource === '*' && actions.every((a) => VPC_ACTIONS.has(a) || XRAY_ACTIONS.has(a))) continue;
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

/**
 * No secret in any function's configuration: no planted value anywhere in the
 * template, no dynamic reference (`{{resolve:…}}`, which CloudFormation would
 * resolve into the configuration), no credential variable but as
 * `<VAR>_SECRET_ID`, the name of the secret holding it, which must be an entry of
 * custom.secretCatalog filling that variable. The role of each function may
 * read exactly the secrets its variables name. The connector takes its NATS
 * login as ECS task secrets, never as plain environment.
 */
export function checkSecrets(t: Cfn, ctx: TemplateContext): Violation[] {
  const out: Violation[] = [];
  const text = JSON.stringify(t);
  for (const planted of ctx.plantedSecrets)
    if (text.includes(planted))
      out.push({ rule: 'secrets', message: `a secret from the environment is written into the template` });
  if (text.includes('{{resolve:'))
    out.push({ rule: 'secrets', message: 'a dynamic reference ({{resolve:…}}) is in the template' });
  const prefix = `${ctx.service}/${ctx.stage}/`;
  for (const [key, fn] of Object.entries(ctx.functions)) {
    const id = functionLogicalId(key);
    const variables: Record<string, unknown> = t.Resources[id]?.Properties?.Environment?.Variables ?? {};
    const named = new Set<string>();
    for (const [name, value] of Object.entries(variables)) {
      if (name.endsWith('_SECRET_ID') && typeof value === 'string' && value.startsWith(prefix)) {
        const problem = secretNameProblem(name.slice(0, -'_SECRET_ID'.length), value.slice(prefix.length), ctx);
        if (problem) out.push({ rule: 'secrets', message: `${key} ${name}: ${problem}` });
        else named.add(value.slice(prefix.length).split('#')[0]);
        continue;
      }
      if (NOT_SECRET[name]) {
        if (!NOT_SECRET[name](value, t))
          out.push({ rule: 'secrets', message: `${key} ${name} is not what it must be` });
        continue;
      }
      const catalogued = Object.values(ctx.secretCatalog).some((vars) => name in vars);
      if (catalogued || SECRET_VARIABLE.test(name))
        out.push({ rule: 'secrets', message: `${key} ${name} is in the configuration: only ${name}_SECRET_ID may be` });
    }
    const granted = new Set(roleSecrets(t, id));
    const sorted = (set: Set<string>) => [...set].sort().join(', ');
    if (sorted(granted) !== sorted(named))
      out.push({
        rule: 'secrets',
        message: `${key} (${fn.name}) may read [${sorted(granted)}] but its variables name [${sorted(named)}]`,
      });
  }
  for (const [id, r] of of(t, 'AWS::ECS::TaskDefinition'))
    for (const c of r.Properties.ContainerDefinitions ?? [])
      for (const e of c.Environment ?? [])
        if (SECRET_VARIABLE.test(e.Name))
          out.push({ rule: 'secrets', message: `${id} ${e.Name} is plain task environment, not a secret` });
  return out;
}

/** Why `<variable>_SECRET_ID=<service>/<stage>/<reference>` is not one the catalog makes, if it is not. */
function secretNameProblem(variable: string, reference: string, ctx: TemplateContext): string | undefined {
  const [name, key = ''] = reference.split('#');
  const entry = Object.prototype.hasOwnProperty.call(ctx.secretCatalog, name) ? ctx.secretCatalog[name] : undefined;
  if (!entry) return `secret ${name} is not in custom.secretCatalog`;
  if (!(variable in entry)) return `secret ${name} does not fill ${variable}`;
  if (entry[variable] !== key)
    return `${variable} is key ${JSON.stringify(entry[variable])} of ${name}, not ${JSON.stringify(key)}`;
  return undefined;
}

/** The secrets (by name) a function's role may read. */
function roleSecrets(t: Cfn, functionId: string): string[] {
  return accessLines(t, functionId, {})
    .filter((line) => line.startsWith('secret:'))
    .map((line) => line.split(' ')[0].slice('secret:'.length));
}

const LOOPBACK = /(^|[/@,\s[])(127\.\d+\.\d+\.\d+|localhost|::1|0\.0\.0\.0)(?=$|[:/\],\s])/i;

/**
 * No function's environment names this machine: a loopback address in Lambda
 * reaches nothing (the local target's defaults must never be packaged for AWS).
 */
export function checkLoopback(t: Cfn): Violation[] {
  const out: Violation[] = [];
  for (const [id, r] of of(t, 'AWS::Lambda::Function'))
    for (const [name, value] of Object.entries<unknown>(r.Properties.Environment?.Variables ?? {}))
      for (const text of literals(value))
        if (LOOPBACK.test(text))
          out.push({ rule: 'loopback', message: `${id} ${name} is a loopback address: ${text}` });
  return out;
}

/** The literal strings of a value, intrinsic functions included. */
function literals(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(literals);
  if (value && typeof value === 'object') return Object.values(value).flatMap(literals);
  return [];
}

/**
 * A role per function, no shared role: each function of ours runs as a role
 * of the stack's own that no other function uses, that writes only its own
 * log group, and that carries no managed policy (whose statements the checks
 * could not see).
 */
export function checkRoles(t: Cfn, ctx: TemplateContext): Violation[] {
  const out: Violation[] = [];
  const users = new Map<string, string[]>();
  for (const key of Object.keys(ctx.functions)) {
    const id = functionLogicalId(key);
    const roleId = t.Resources[id]?.Properties?.Role?.['Fn::GetAtt']?.[0];
    if (typeof roleId !== 'string' || t.Resources[roleId]?.Type !== 'AWS::IAM::Role') {
      out.push({ rule: 'roles', message: `${key} does not run as a role of this stack` });
      continue;
    }
    users.set(roleId, [...(users.get(roleId) ?? []), key]);
    const role = t.Resources[roleId];
    if (role.Properties.ManagedPolicyArns?.length)
      out.push({ rule: 'roles', message: `${roleId} carries managed policies` });
    const logGroup = `${id.slice(0, -'LambdaFunction'.length)}LogGroup`;
    for (const st of statementsOf(role))
      if ([st.Action].flat().some((a: string) => a.startsWith('logs:')))
        for (const resource of [st.Resource].flat())
          if (resource?.['Fn::GetAtt']?.[0] !== logGroup || resource?.['Fn::GetAtt']?.[1] !== 'Arn')
            out.push({
              rule: 'roles',
              message: `${roleId} writes logs outside ${logGroup}: ${JSON.stringify(resource)}`,
            });
  }
  for (const [roleId, keys] of users)
    if (keys.length > 1) out.push({ rule: 'roles', message: `${roleId} is shared by ${keys.join(', ')}` });
  if (t.Resources.IamRoleLambdaExecution)
    out.push({ rule: 'roles', message: "the framework's shared role IamRoleLambdaExecution is in the template" });
  return out;
}

const statementsOf = (role: { Properties?: any }): any[] =>
  (role.Properties?.Policies ?? []).flatMap((p: any) => p.PolicyDocument.Statement);

/**
 * What a function may do, one line per resource: `<resource> <action> …`,
 * sorted. Resources are written as the stack names them: a logical id
 * (`DownloadsTable`), an index or key prefix under it (`DownloadsTable/index/GSI1`,
 * `FilesBucket/raw/*`), `DownloadsTable.StreamArn`, `function:<key>`,
 * `secret:<name>`, `*`. Its own log group is left out (checkRoles); each key
 * whose policy names its role is a line (`SyncTokenKey kms:Decrypt`).
 */
export function accessOf(t: Cfn, ctx: Pick<TemplateContext, 'functions'>): Record<string, string[]> {
  const byName = Object.fromEntries(Object.entries(ctx.functions).map(([key, f]) => [f.name, key]));
  return Object.fromEntries(
    Object.keys(ctx.functions).map((key) => [key, accessLines(t, functionLogicalId(key), byName)]),
  );
}

function accessLines(t: Cfn, functionId: string, functionKeys: Record<string, string>): string[] {
  const roleId = t.Resources[functionId]?.Properties?.Role?.['Fn::GetAtt']?.[0];
  const role = roleId ? t.Resources[roleId] : undefined;
  const logGroup = `${functionId.slice(0, -'LambdaFunction'.length)}LogGroup`;
  const grants = new Map<string, Set<string>>();
  const grant = (resource: string, actions: string[]) => {
    const set = grants.get(resource) ?? new Set<string>();
    for (const a of actions) set.add(a);
    grants.set(resource, set);
  };
  for (const st of role ? statementsOf(role) : []) {
    if (st.Effect !== 'Allow') continue;
    for (const resource of [st.Resource].flat()) {
      if (resource?.['Fn::GetAtt']?.[0] === logGroup) continue;
      // Tracing is the stage's setting, not the handler's access (checkTracing checks it apart).
      const actions = [st.Action].flat().filter((a: string) => !XRAY_ACTIONS.has(a));
      if (actions.length) grant(resourceName(resource, functionKeys), actions);
    }
  }
  for (const [keyId, key] of of(t, 'AWS::KMS::Key'))
    for (const st of key.Properties?.KeyPolicy?.Statement ?? [])
      if (st.Effect === 'Allow' && JSON.stringify(principalsOf(st)).includes(JSON.stringify(roleId ?? '')))
        grant(keyId, [st.Action].flat());
  return [...grants.entries()].map(([resource, actions]) => `${resource} ${[...actions].sort().join(' ')}`).sort();
}

const principalsOf = (st: any): unknown[] =>
  [st.Principal?.AWS ?? st.Principal].flat().map((p: any) => p?.['Fn::GetAtt']?.[0] ?? p);

function resourceName(resource: any, functionKeys: Record<string, string>): string {
  if (resource === '*') return '*';
  const att = resource?.['Fn::GetAtt'];
  if (att) return att[1] === 'Arn' ? att[0] : `${att[0]}.${att[1]}`;
  const join = resource?.['Fn::Join'];
  if (join) {
    const [sep, parts] = join as [string, any[]];
    const last = String(parts[parts.length - 1]);
    if (sep === '/' && parts[0]?.['Fn::GetAtt']) return `${parts[0]['Fn::GetAtt'][0]}/${parts.slice(1).join('/')}`;
    if (sep === ':' && parts.includes('function')) return `function:${functionKeys[last] ?? last}`;
    if (sep === ':' && parts.includes('secretsmanager'))
      return `secret:${last.replace(/^.*\//, '').replace(/-\?{6}$/, '')}`;
  }
  return JSON.stringify(resource);
}

/**
 * The functions anyone on the network reaches without a token: what each may
 * read and write, besides its own log group. The authorizer, the healthcheck
 * and sign-in write nothing; the webhook writes only its own update records and
 * the downloads its buttons retry or cancel. A wider grant is a finding.
 */
export const PUBLIC_FUNCTIONS: Record<string, { secrets: string[]; writes: string[]; why: string }> = {
  authorizer: { secrets: ['auth-tokens', 'session-keys'], writes: [], why: 'checks tokens and session cookies' },
  healthcheck: { secrets: ['nats', 'scan-smb'], writes: [], why: 'probes NATS and the hot folder' },
  webSignIn: { secrets: ['auth-tokens', 'session-keys'], writes: [], why: 'turns a token into a session cookie' },
  telegramWebhook: {
    secrets: ['telegram', 'torrent-client'],
    writes: ['TelegramTable', 'DownloadsTable'],
    why: "the bot's update records; its buttons retry and cancel downloads in the torrent client",
  },
};

const WRITE_ACTION =
  /^(dynamodb:(PutItem|UpdateItem|DeleteItem|BatchWriteItem|PartiQL(Insert|Update|Delete))|s3:(PutObject|DeleteObject)|sqs:SendMessage|lambda:InvokeFunction|kms:(Encrypt|GenerateDataKey|ReEncrypt)|secretsmanager:(PutSecretValue|UpdateSecret|DeleteSecret)|.*:\*)/;

export function checkPublicFunctions(t: Cfn, ctx: TemplateContext): Violation[] {
  const out: Violation[] = [];
  const access = accessOf(t, ctx);
  for (const [key, allowed] of Object.entries(PUBLIC_FUNCTIONS)) {
    if (!access[key]) {
      out.push({ rule: 'public', message: `${key} is not in the template` });
      continue;
    }
    for (const line of access[key]) {
      const [resource, ...actions] = line.split(' ');
      if (resource.startsWith('secret:') && !allowed.secrets.includes(resource.slice('secret:'.length)))
        out.push({ rule: 'public', message: `${key} may read ${resource}, which it does not use` });
      const writes = actions.filter((a) => WRITE_ACTION.test(a));
      if (writes.length && !allowed.writes.includes(resource.split(/[/.]/)[0]))
        out.push({ rule: 'public', message: `${key} may ${writes.join(', ')} on ${resource}, which it does not own` });
    }
  }
  return out;
}

/**
 * Each function may do exactly what the table says (`accessOf` lines): a
 * wider grant, a missing one, or a function without a row is reported.
 */
export function checkAccess(t: Cfn, ctx: TemplateContext, expected: Record<string, string[]>): Violation[] {
  const out: Violation[] = [];
  const actual = accessOf(t, ctx);
  for (const key of new Set([...Object.keys(actual), ...Object.keys(expected)])) {
    if (!expected[key]) {
      out.push({ rule: 'access', message: `${key} has no row in the expected access table` });
      continue;
    }
    if (!actual[key]) {
      out.push({ rule: 'access', message: `the access table names ${key}, which is no function` });
      continue;
    }
    const want = new Set(expected[key]);
    const have = new Set(actual[key]);
    for (const line of have) if (!want.has(line)) out.push({ rule: 'access', message: `${key} may: ${line}` });
    for (const line of want) if (!have.has(line)) out.push({ rule: 'access', message: `${key} lacks: ${line}` });
  }
  return out;
}

// What using a key is (the account root administers a key but never uses it).
const KEY_USE =
  /^kms:(\*|Encrypt|Decrypt|ReEncrypt.*|GenerateDataKey.*|CreateGrant|Sign|Verify|GenerateMac|VerifyMac|DeriveSharedSecret)$/;

/**
 * Every customer-managed key rotates, survives the stack, and its policy
 * lets the account administer it and only the roles of our functions use it.
 */
export function checkKeys(t: Cfn, ctx: TemplateContext): Violation[] {
  const out: Violation[] = [];
  const functionRoles = new Set(
    Object.keys(ctx.functions).map((key) => t.Resources[functionLogicalId(key)]?.Properties?.Role?.['Fn::GetAtt']?.[0]),
  );
  for (const [id, key] of of(t, 'AWS::KMS::Key')) {
    if (key.Properties?.EnableKeyRotation !== true) out.push({ rule: 'keys', message: `${id} does not rotate` });
    if (key.DeletionPolicy !== 'Retain' || key.UpdateReplacePolicy !== 'Retain')
      out.push({ rule: 'keys', message: `${id} is not retained when the stack or the resource goes` });
    const statements: any[] = key.Properties?.KeyPolicy?.Statement ?? [];
    if (statements.length === 0) out.push({ rule: 'keys', message: `${id} has no key policy` });
    for (const st of statements) {
      if (st.Effect !== 'Allow') continue;
      const actions: string[] = [st.Action].flat();
      const uses = actions.filter((a) => KEY_USE.test(a));
      for (const principal of principalsOf(st)) {
        const root = typeof principal !== 'string' && /:root"/.test(JSON.stringify(principal));
        if (root) {
          if (uses.length) out.push({ rule: 'keys', message: `${id}: the account root may ${uses.join(', ')}` });
          if (actions.some((a) => a.endsWith('*')))
            out.push({ rule: 'keys', message: `${id}: a wildcard action for the root` });
        } else if (typeof principal !== 'string' || !functionRoles.has(principal))
          out.push({
            rule: 'keys',
            message: `${id}: ${JSON.stringify(principal)} is not the role of one of our functions`,
          });
      }
    }
  }
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
  downloadsCreate: 730,
  downloadsList: 720,
  downloadsGet: 600,
  downloadsRetry: 600,
  downloadsState: 720,
  downloadsInfohashes: 720,
  downloadsPoll: 600,
  webPages: 730,
  webActions: 740,
  webSignIn: 500,
  webConsole: 750,
  webConsoleRetry: 900,
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
  telegramNotify: 860,
  telegramWebhook: 900,
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
