import { createAwsClients, AwsClients } from '../../lib/aws/clients';
import { Config, loadConfig } from '../../lib/config';

/** What a test needs to talk to the run's stack. */
export function stackConfig(): Config {
  return loadConfig(process.env);
}

export function stackClients(): AwsClients {
  return createAwsClients(stackConfig());
}

export function httpUrl(path: string): string {
  const base = process.env.TEST_HTTP_URL;
  if (!base) throw new Error('TEST_HTTP_URL is not set: run this test in the jest `stack` project');
  return base + path;
}
