import { setTimeout as sleep } from 'node:timers/promises';
import { Credentials, signV4 } from './sigv4';

/**
 * The few SQS calls the failure-queue replay makes, over SQS's JSON protocol
 * (AWS JSON 1.0, `X-Amz-Target: AmazonSQS.<Action>`), signed with SigV4:
 * `@aws-sdk/client-sqs` is not installed in this project (docs/decisions.md,
 * 282). The endpoint is AWS_ENDPOINT_URL_SQS when set (moto's server in the
 * tests), else the region's. Every call here is safe to send again: receive
 * (a message not yet seen stays in the queue), delete and a visibility change
 * (both idempotent), so transient failures are retried, bounded.
 */

export interface SqsMessage {
  MessageId: string;
  ReceiptHandle: string;
  Body: string;
  Attributes?: Record<string, string>;
}

export class SqsError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(`SQS ${code}: ${message}`);
    this.name = 'SqsError';
  }
}

export interface SqsOptions {
  region: string;
  endpoint?: string;
  credentials: () => Promise<Credentials>;
  /** One HTTP call's bound. */
  timeoutMs?: number;
  attempts?: number;
}

export class SqsClient {
  private readonly endpoint: URL;
  constructor(private readonly options: SqsOptions) {
    this.endpoint = new URL(options.endpoint ?? `https://sqs.${options.region}.amazonaws.com`);
    this.endpoint.pathname = '/';
  }

  async queueUrl(name: string): Promise<string> {
    return (await this.call<{ QueueUrl: string }>('GetQueueUrl', { QueueName: name })).QueueUrl;
  }

  async attributes(queueUrl: string, names: string[]): Promise<Record<string, string>> {
    const out = await this.call<{ Attributes?: Record<string, string> }>('GetQueueAttributes', {
      QueueUrl: queueUrl,
      AttributeNames: names,
    });
    return out.Attributes ?? {};
  }

  async receive(queueUrl: string, max: number, visibilitySeconds: number, waitSeconds: number): Promise<SqsMessage[]> {
    const out = await this.call<{ Messages?: SqsMessage[] }>('ReceiveMessage', {
      QueueUrl: queueUrl,
      MaxNumberOfMessages: max,
      VisibilityTimeout: visibilitySeconds,
      WaitTimeSeconds: waitSeconds,
      MessageSystemAttributeNames: ['SentTimestamp', 'ApproximateReceiveCount', 'ApproximateFirstReceiveTimestamp'],
    });
    return out.Messages ?? [];
  }

  async deleteMessage(queueUrl: string, receiptHandle: string): Promise<void> {
    await this.call('DeleteMessage', { QueueUrl: queueUrl, ReceiptHandle: receiptHandle });
  }

  async changeVisibility(queueUrl: string, receiptHandle: string, seconds: number): Promise<void> {
    await this.call('ChangeMessageVisibility', {
      QueueUrl: queueUrl,
      ReceiptHandle: receiptHandle,
      VisibilityTimeout: seconds,
    });
  }

  /** For tests and drills: the queue's own calls, as Lambda's destination would send. */
  async createQueue(name: string): Promise<string> {
    return (await this.call<{ QueueUrl: string }>('CreateQueue', { QueueName: name })).QueueUrl;
  }

  async sendMessage(queueUrl: string, body: string): Promise<string> {
    return (await this.call<{ MessageId: string }>('SendMessage', { QueueUrl: queueUrl, MessageBody: body })).MessageId;
  }

  private async call<T = unknown>(action: string, input: object): Promise<T> {
    const attempts = this.options.attempts ?? 3;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once<T>(action, input);
      } catch (err) {
        if (attempt >= attempts || !transient(err)) throw err;
        await sleep(100 * 2 ** attempt + Math.floor(Math.random() * 100));
      }
    }
  }

  private async once<T>(action: string, input: object): Promise<T> {
    const body = JSON.stringify(input);
    const headers = signV4(
      {
        method: 'POST',
        url: this.endpoint,
        headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `AmazonSQS.${action}` },
        body,
      },
      { service: 'sqs', region: this.options.region },
      await this.options.credentials(),
      new Date(),
    );
    delete headers.host; // fetch sets it from the URL
    const res = await fetch(this.endpoint, {
      method: 'POST',
      headers,
      body,
      signal: AbortSignal.timeout(this.options.timeoutMs ?? 25_000),
    });
    const text = await res.text();
    if (res.ok) return (text ? JSON.parse(text) : {}) as T;
    let code = `HTTP${res.status}`;
    let message = text.slice(0, 300);
    try {
      const err = JSON.parse(text) as { __type?: string; message?: string; Message?: string };
      if (err.__type) code = err.__type.split('#').pop()!;
      message = err.message ?? err.Message ?? message;
    } catch {
      // not JSON: keep the status and the text
    }
    throw new SqsError(code, message, res.status);
  }
}

/** A throttle, a 5xx or no answer at all: the call may be sent again. */
function transient(err: unknown): boolean {
  if (err instanceof SqsError) return err.status >= 500 || /Throttl/.test(err.code);
  // fetch's network failure (TypeError) or its bound (TimeoutError); a malformed answer is not retried.
  return (err as Error | undefined)?.name !== 'SyntaxError';
}
