/**
 * The secret rules of a deployable template: no credential in any function's
 * configuration (only where to read it), every secret id one the catalog
 * makes and the function's role may read, and no loopback endpoint.
 */

import { accessLines } from './iam-checks';
import { Cfn, functionLogicalId, KMS_KEY_ARN, literals, of, TemplateContext, Violation } from './template';

// Names that say "credential": such a variable is never in a function's configuration, only
// `<VAR>_SECRET_ID`, the name of the secret holding it (lib/secrets/runtime.ts reads it at run time).
const SECRET_VARIABLE = /(TOKEN|PASSWORD|SECRET|SEED|JWT|API_KEY|_KEYS$|^NATS_USER$)/;
// Variables whose names look like a credential and are not one, each with what it must be.
const NOT_SECRET: Record<string, (value: unknown, t: Cfn) => boolean> = {
  // How long a secret read at run time is kept (lib/secrets/runtime.ts): seconds, or empty for its default.
  SECRETS_CACHE_SECONDS: (value) => typeof value === 'string' && /^\d{0,4}$/.test(value),
  // The KMS keys that seal brokerage tokens: the stack's own key's ARN, or (replacing it, docs/security.md) a
  // comma-joined list of key ARNs and that one; never anything a key cannot be.
  SYNC_TOKEN_KMS_KEY: (value, t) => {
    const own = (v: unknown) => {
      const id = (v as any)?.['Fn::GetAtt']?.[0];
      return typeof id === 'string' && t.Resources[id]?.Type === 'AWS::KMS::Key';
    };
    if (own(value)) return true;
    const join = (value as any)?.['Fn::Join'];
    const parts: unknown[] = join?.[0] === ',' && Array.isArray(join[1]) ? join[1] : [value];
    return parts.every((p) => own(p) || (typeof p === 'string' && KMS_KEY_ARN.test(p)));
  },
};

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
