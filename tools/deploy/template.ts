/**
 * The shape of a packaged CloudFormation template and of the context its
 * checks read (tools/deploy/template-checks.ts, iam-checks.ts,
 * secret-checks.ts, operations-checks.ts), with the helpers they share.
 */

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
  | 'runtime'
  | 'failure-queue';

/** The serverless logical id of a function key (osls: first letter upper-cased, '-' and '_' spelled out). */
export function functionLogicalId(key: string): string {
  return `${key.charAt(0).toUpperCase()}${key.slice(1).replace(/-/g, 'Dash').replace(/_/g, 'Underscore')}LambdaFunction`;
}

/** A KMS key's ARN (an alias or a bare id is not one): the form SYNC_TOKEN_KMS_KEY may name keys of your own in. */
export const KMS_KEY_ARN = /^arn:aws(-[a-z]+)*:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]{1,64}$/;

export const of = (t: Cfn, type: string) => Object.entries(t.Resources).filter(([, r]) => r.Type === type);

/** The literal strings of a value, intrinsic functions included. */
export function literals(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(literals);
  if (value && typeof value === 'object') return Object.values(value).flatMap(literals);
  return [];
}
