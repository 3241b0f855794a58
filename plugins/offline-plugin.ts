/**
 * What our serverless-offline plugins share: the part of the framework's
 * `serverless` object they read, the start/stop hooks around offline's own
 * start, and where offline's Lambda endpoint listens (they invoke functions
 * through it, as AWS's event sources invoke Lambda).
 */

export interface FunctionDef {
  name: string;
  events?: Array<Record<string, unknown>>;
}

export interface Serverless {
  service: {
    provider: { region: string; environment?: Record<string, string> };
    custom?: Record<string, unknown>;
    resources?: { Resources?: Record<string, { Type: string; Properties?: Record<string, unknown> }> };
    getAllFunctions(): string[];
    getFunction(key: string): FunctionDef;
  };
  processedInput: { options?: Record<string, unknown> };
}

export interface PluginUtils {
  log?: { notice(message: string): void; warning(message: string): void };
}

export abstract class OfflinePlugin {
  readonly hooks: Record<string, () => Promise<void>>;

  constructor(
    protected readonly serverless: Serverless,
    _options: unknown,
    protected readonly utils?: PluginUtils,
  ) {
    this.hooks = {
      'offline:start:init': () => this.start(),
      'offline:start:end': () => this.stop(),
    };
  }

  abstract start(): Promise<void>;
  abstract stop(): Promise<void>;

  /** Every function of the service by its key, as serverless resolved it. */
  protected functions(): Record<string, FunctionDef> {
    const service = this.serverless.service;
    return Object.fromEntries(service.getAllFunctions().map((key) => [key, service.getFunction(key)]));
  }

  /** Offline's Lambda endpoint: the command line's host and port, then custom.serverless-offline's, then offline's defaults. */
  protected lambdaEndpoint(): string {
    const offline = (this.serverless.service.custom?.['serverless-offline'] ?? {}) as {
      host?: string;
      lambdaPort?: number;
    };
    const options = this.serverless.processedInput.options ?? {};
    const host = (options.host as string | undefined) ?? offline.host ?? '127.0.0.1';
    const lambdaPort = (options.lambdaPort as number | string | undefined) ?? offline.lambdaPort ?? 3002;
    return `http://${host}:${lambdaPort}`;
  }
}
