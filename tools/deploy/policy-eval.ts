/**
 * The part of IAM's policy evaluation our policies use, to ask of a template
 * (or of what moto stored, which moto itself never enforces) "may this
 * principal do this here?": explicit Deny first, then an Allow in an identity
 * OR a resource policy (one account); the condition operators the templates
 * use (String*, Arn*, Bool, Null), IAM's missing-key rules (a positive
 * operator on an absent key is false, a negated one true), `*`/`?` wildcards.
 * Not a general IAM engine: no NotPrincipal, no policy variables, no
 * ForAllValues/ForAnyValue, no cross-account rules.
 */

export interface Statement {
  Sid?: string;
  Effect: string;
  Principal?: unknown;
  Action?: string | string[];
  NotAction?: string | string[];
  Resource?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

export interface PolicyRequest {
  /** The caller's role (aws:PrincipalArn); undefined for a service principal. */
  principal?: string;
  action: string;
  resource: string;
  /** Condition keys present in the request; an absent key is absent. */
  context: Record<string, string>;
}

export type Verdict = 'allowed' | 'denied' | 'not-allowed';

export function evaluate(
  request: PolicyRequest,
  policies: { identity: readonly Statement[]; resource?: readonly Statement[] },
): Verdict {
  const applicable = [
    ...policies.identity.map((st) => ({ st, identity: true })),
    ...(policies.resource ?? []).map((st) => ({ st, identity: false })),
  ].filter(({ st, identity }) => applies(st, request, identity));
  if (applicable.some(({ st }) => st.Effect === 'Deny')) return 'denied';
  return applicable.some(({ st }) => st.Effect === 'Allow') ? 'allowed' : 'not-allowed';
}

function applies(st: Statement, req: PolicyRequest, identity: boolean): boolean {
  if (st.Action !== undefined && !list(st.Action).some((a) => matches(a, req.action))) return false;
  if (st.NotAction !== undefined && list(st.NotAction).some((a) => matches(a, req.action))) return false;
  if (!list(st.Resource ?? '*').some((r) => matches(String(r), req.resource))) return false;
  if (!identity && !principalMatches(st.Principal, req.principal)) return false;
  return Object.entries(st.Condition ?? {}).every(([operator, keys]) =>
    Object.entries(keys).every(([key, expected]) => condition(operator, req.context[key], list(expected))),
  );
}

function principalMatches(principal: unknown, caller: string | undefined): boolean {
  if (principal === '*') return true;
  const aws = (principal as { AWS?: unknown } | undefined)?.AWS;
  if (aws === undefined) return false;
  return list(aws).some((p) => p === '*' || p === caller);
}

function condition(operator: string, actual: string | undefined, expected: string[]): boolean {
  if (operator === 'Null') return expected.some((e) => (e === 'true') === (actual === undefined));
  const negated = /Not(Equals|Like)$/.test(operator);
  if (actual === undefined) return negated;
  const base = operator.replace('Not', '');
  const test = (e: string) => {
    if (base === 'StringEquals' || base === 'ArnEquals' || base === 'Bool') return actual === e;
    if (base === 'StringLike' || base === 'ArnLike') return matches(e, actual);
    throw new Error(`policy-eval: condition operator ${operator} is not implemented`);
  };
  const any = expected.some(test);
  return negated ? !any : any;
}

/** IAM's wildcards: `*` any run of characters, `?` one. */
export function matches(pattern: string, value: string): boolean {
  const regex = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${regex}$`, 's').test(value);
}

function list(value: unknown): string[] {
  return (Array.isArray(value) ? value : [value]).map(String);
}

/**
 * A template's value with its intrinsic functions resolved the way the
 * deployment would: Ref and Fn::GetAtt through `arnOf`, the pseudo
 * parameters, Fn::Join. What else it meets is an error, not a guess.
 */
export function resolveIntrinsics(
  value: unknown,
  arnOf: (logicalId: string, attribute: string) => string,
  pseudo: { partition: string; region: string; account: string },
): unknown {
  const again = (v: unknown) => resolveIntrinsics(v, arnOf, pseudo);
  if (Array.isArray(value)) return value.map(again);
  if (!value || typeof value !== 'object') return value;
  const v = value as Record<string, unknown>;
  if ('Ref' in v) {
    const name = String(v.Ref);
    if (name === 'AWS::Partition') return pseudo.partition;
    if (name === 'AWS::Region') return pseudo.region;
    if (name === 'AWS::AccountId') return pseudo.account;
    return arnOf(name, 'Ref');
  }
  if ('Fn::GetAtt' in v) {
    const [id, attribute] = Array.isArray(v['Fn::GetAtt']) ? v['Fn::GetAtt'] : String(v['Fn::GetAtt']).split('.');
    return arnOf(String(id), String(attribute));
  }
  if ('Fn::Join' in v) {
    const [separator, parts] = v['Fn::Join'] as [string, unknown[]];
    return (again(parts) as unknown[]).join(separator);
  }
  const fn = Object.keys(v).find((k) => k.startsWith('Fn::'));
  if (fn) throw new Error(`policy-eval: ${fn} is not resolved`);
  return Object.fromEntries(Object.entries(v).map(([k, inner]) => [k, again(inner)]));
}
