/**
 * The IAM rules of a deployable template: every grant scoped to what the stack
 * owns, a role per function with exactly the access its table row says, public
 * functions kept to their own secrets, KMS use only where declared.
 */

import { Cfn, functionLogicalId, KMS_KEY_ARN, literals, of, TemplateContext, Violation } from './template';

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

/**
 * Every resource of every IAM statement is one the stack owns: Ref/GetAtt of
 * its own logical ids, or an ARN naming this service-stage's functions or
 * secrets. No '*' but object keys under the service's bucket, and EC2's ENI
 * actions (a function in a VPC), which EC2 cannot scope.
 */
export function checkIam(t: Cfn, ctx: TemplateContext): Violation[] {
  const out: Violation[] = [];
  const prefix = `${ctx.service}-${ctx.stage}`;
  const namedKeys = configuredKeys(t);
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
          // A key of the operator's own that a function's key setting names (replacing the KMS key).
          if (typeof resource === 'string' && namedKeys.has(resource) && actions.every((a) => KEY_USE.test(a))) {
            if (!st.Condition?.StringEquals?.['kms:EncryptionContext:purpose'])
              out.push({ rule: 'iam', message: `${roleId} may use ${resource} without the encryption context` });
            continue;
          }
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

/** The literal KMS key ARNs the functions' environments name (SYNC_TOKEN_KMS_KEY given at deploy). */
function configuredKeys(t: Cfn): Set<string> {
  return new Set(
    of(t, 'AWS::Lambda::Function')
      .flatMap(([, fn]) => literals(fn.Properties?.Environment?.Variables ?? {}))
      .flatMap((text) => text.split(','))
      .filter((text) => KMS_KEY_ARN.test(text)),
  );
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

export function accessLines(t: Cfn, functionId: string, functionKeys: Record<string, string>): string[] {
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
  if (typeof resource === 'string') return resource;
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
  syncCalendarFeed: { secrets: [], writes: [], why: "checks the feed's own token and reads one user's calendar" },
  apiDocument: { secrets: [], writes: [], why: 'answers the OpenAPI document, built from code: no storage at all' },
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
      if (uses.length && !st.Condition?.StringEquals?.['kms:EncryptionContext:purpose'])
        out.push({ rule: 'keys', message: `${id}: ${uses.join(', ')} is allowed without the encryption context` });
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
