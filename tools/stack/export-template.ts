import fs from 'node:fs';
import path from 'node:path';
import { planResources } from './resources';
import { loadServiceDefinition } from './definition';
import { cliSpec, runCli } from '../cli/run';

/**
 * `npm run localstack:template`: writes the tables and buckets of the resolved
 * serverless.yml as a CloudFormation template for LocalStack's init hook
 * (localstack/init/ready.d). Generated, never edited: serverless.yml stays the
 * only definition.
 */
export const TEMPLATE_CLI = cliSpec({
  usage: `usage: npm run localstack:template

Writes the tables and buckets of the resolved serverless.yml as a CloudFormation
template for LocalStack's init hook (.stack/localstack/resources.json).

  --help  this text

Environment: STAGE (default dev). Exit 0 written, 2 bad usage or an unsupported resource.`,
  options: {},
});

async function main(): Promise<number> {
  const root = path.resolve(__dirname, '..', '..');
  const stage = process.env.STAGE ?? 'dev';
  // LocalStack is a local target: the aws one has no bucket name without FILES_BUCKET (docs/deploy.md section 3).
  const env = { ...process.env, DEPLOY_TARGET: 'local', SLS_TELEMETRY_DISABLED: '1' };
  const definition = await loadServiceDefinition(root, env, stage);
  const all = definition.resources.Resources;
  const plan = planResources(all); // validates: fails here, not inside the container
  const keep = [...plan.tables, ...plan.buckets].map((r) => r.logicalId);
  const template = {
    AWSTemplateFormatVersion: '2010-09-09',
    Resources: Object.fromEntries(keep.map((id) => [id, all[id]])),
  };
  const out = path.join(root, '.stack', 'localstack', 'resources.json');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify(template, null, 2));
  process.stdout.write(`wrote ${path.relative(root, out)}: ${keep.join(', ')}\n`);
  return 0;
}

if (require.main === module) runCli(TEMPLATE_CLI, main, { crash: { code: 1, stack: false } });
