import { evaluate, resolveIntrinsics, type Statement, type Verdict } from './policy-eval';
import { Cfn, functionLogicalId, of, TemplateContext, Violation } from './template';

/**
 * Who may put a record on the async-failure queue (decision 380): a record
 * there is what `npm run ops:replay-failures` acts on, so only Lambda's own
 * delivery of an on-failure record may send one. Asked of the policies as
 * deployed: each function role's identity policy and the queue's policy,
 * evaluated (tools/deploy/policy-eval.ts) for four callers of SendMessage:
 *
 * - `delivery`: Lambda writing the function's on-failure record, with the
 *   function's role, from outside its execution environment (no
 *   lambda:SourceFunctionArn in the request): must be allowed;
 * - `code`: the function's own code with the same role (Lambda puts
 *   lambda:SourceFunctionArn in every such call): must not be;
 * - `plaintext`: the delivery without TLS: must not be;
 * - `operator`: an administrator allowed sqs:* on everything: must not be.
 *
 * A function without an on-failure destination may not send at all.
 */

export interface QueueSendVerdicts {
  delivery: Verdict;
  code: Verdict;
  plaintext: Verdict;
}

export interface FailureQueuePolicies {
  queueArn: string;
  queuePolicy: Statement[];
  /** Each function's role ARN and its identity statements, by function key. */
  roles: Record<string, { roleArn: string; functionArn: string; statements: Statement[] }>;
}

const ADMIN: Statement[] = [{ Effect: 'Allow', Action: '*', Resource: '*' }];
const ADMIN_ARN = 'arn:aws:iam::123456789012:role/Administrator';

export function sendVerdicts(p: FailureQueuePolicies, key: string): QueueSendVerdicts {
  const { roleArn, functionArn, statements } = p.roles[key];
  const ask = (context: Record<string, string>) =>
    evaluate(
      { principal: roleArn, action: 'sqs:SendMessage', resource: p.queueArn, context },
      { identity: statements, resource: p.queuePolicy },
    );
  const tls = { 'aws:SecureTransport': 'true', 'aws:PrincipalArn': roleArn };
  return {
    delivery: ask(tls),
    code: ask({ ...tls, 'lambda:SourceFunctionArn': functionArn }),
    plaintext: ask({ ...tls, 'aws:SecureTransport': 'false' }),
  };
}

export function operatorVerdict(p: FailureQueuePolicies): Verdict {
  return evaluate(
    {
      principal: ADMIN_ARN,
      action: 'sqs:SendMessage',
      resource: p.queueArn,
      context: { 'aws:SecureTransport': 'true', 'aws:PrincipalArn': ADMIN_ARN },
    },
    { identity: ADMIN, resource: p.queuePolicy },
  );
}

/** Every violation of the rule above, given the policies and which functions have an on-failure destination. */
export function failureQueueViolations(p: FailureQueuePolicies, senders: ReadonlySet<string>): Violation[] {
  const out: Violation[] = [];
  const say = (message: string) => out.push({ rule: 'failure-queue', message });
  if (p.queuePolicy.length === 0) say('the failure queue has no queue policy');
  for (const key of Object.keys(p.roles)) {
    const v = sendVerdicts(p, key);
    if (senders.has(key) && v.delivery !== 'allowed') say(`${key}: Lambda's delivery of its record is ${v.delivery}`);
    if (v.code === 'allowed') say(`${key}: its own code may send to the failure queue`);
    if (v.plaintext === 'allowed') say(`${key}: a send without TLS is allowed`);
    if (!senders.has(key) && v.delivery === 'allowed') say(`${key} has no on-failure destination and may send`);
  }
  if (operatorVerdict(p) === 'allowed') say("an administrator's role may send to the failure queue");
  return out;
}

const PSEUDO = { partition: 'aws', region: 'us-east-1', account: '123456789012' };

/** The policies as a packaged template states them, its ids resolved to ARNs of one account. */
export function templatePolicies(t: Cfn, ctx: Pick<TemplateContext, 'functions'>): FailureQueuePolicies {
  const arnOf = (id: string, attribute: string) => {
    const type = t.Resources[id]?.Type;
    if (type === 'AWS::IAM::Role') return `arn:aws:iam::${PSEUDO.account}:role/${id}`;
    if (type === 'AWS::SQS::Queue')
      return attribute === 'Ref'
        ? `https://sqs.${PSEUDO.region}.amazonaws.com/${PSEUDO.account}/${id}`
        : `arn:aws:sqs:${PSEUDO.region}:${PSEUDO.account}:${id}`;
    return `arn:aws:cloudformation:::${id}/${attribute}`;
  };
  const resolve = <T>(value: unknown) => resolveIntrinsics(value, arnOf, PSEUDO) as T;
  const [queueId] = of(t, 'AWS::SQS::Queue').map(([id]) => id);
  const queuePolicy = of(t, 'AWS::SQS::QueuePolicy')
    .filter(([, r]) => JSON.stringify(r.Properties.Queues).includes(`"${queueId}"`))
    .flatMap(([, r]) => resolve<Statement[]>(r.Properties.PolicyDocument.Statement));
  const roles: FailureQueuePolicies['roles'] = {};
  for (const [key, fn] of Object.entries(ctx.functions)) {
    const roleId = t.Resources[functionLogicalId(key)]?.Properties?.Role?.['Fn::GetAtt']?.[0];
    if (typeof roleId !== 'string') continue;
    roles[key] = {
      roleArn: arnOf(roleId, 'Arn'),
      functionArn: `arn:aws:lambda:${PSEUDO.region}:${PSEUDO.account}:function:${fn.name}`,
      statements: (t.Resources[roleId].Properties.Policies ?? []).flatMap(
        (policy: { PolicyDocument: unknown }) => resolve<{ Statement: Statement[] }>(policy.PolicyDocument).Statement,
      ),
    };
  }
  return { queueArn: arnOf(queueId, 'Arn'), queuePolicy, roles };
}

/** The functions whose on-failure destination (asynchronous, or a stream's) is the failure queue. */
export function failureQueueSenders(t: Cfn, ctx: Pick<TemplateContext, 'functions'>): Set<string> {
  const destinations = JSON.stringify(
    of(t, 'AWS::Lambda::EventInvokeConfig').map(([, r]) => [r.Properties.FunctionName, r.Properties.DestinationConfig]),
  );
  const streams = of(t, 'AWS::Lambda::EventSourceMapping').filter(([, r]) => r.Properties.DestinationConfig?.OnFailure);
  return new Set(
    Object.keys(ctx.functions).filter(
      (key) =>
        destinations.includes(`{"Ref":"${functionLogicalId(key)}"}`) ||
        streams.some(([, r]) => JSON.stringify(r.Properties.FunctionName).includes(`"${functionLogicalId(key)}"`)),
    ),
  );
}

export function checkFailureQueue(t: Cfn, ctx: Pick<TemplateContext, 'functions'>): Violation[] {
  return failureQueueViolations(templatePolicies(t, ctx), failureQueueSenders(t, ctx));
}
