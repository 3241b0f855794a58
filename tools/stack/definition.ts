import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { CfnResource } from './resources';

/**
 * serverless.yml as the framework resolves it (`serverless print`): the one
 * source of resource definitions and of the functions' environment.
 */
export interface ServiceDefinition {
  service: string;
  provider: { region: string; stage: string; runtime: string; environment: Record<string, string> };
  functions: Record<string, { name: string; handler: string; events?: Array<Record<string, unknown>> }>;
  resources: { Resources: Record<string, CfnResource> };
}

export async function loadServiceDefinition(
  root: string,
  env: NodeJS.ProcessEnv,
  stage: string,
): Promise<ServiceDefinition> {
  const cli = path.join(path.dirname(require.resolve('osls/package.json')), 'bin', 'serverless.js');
  const { stdout } = await promisify(execFile)(process.execPath, [cli, 'print', '--format', 'json', '--stage', stage], {
    cwd: root,
    env,
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(stdout) as ServiceDefinition;
}
