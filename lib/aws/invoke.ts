import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';

/**
 * An asynchronous invocation (`InvocationType: Event`, answered 202): the
 * invoked function runs on its own. Locally AWS_ENDPOINT_URL_LAMBDA points the
 * SDK at serverless offline's Lambda endpoint, so the same call works there.
 */
export type AsyncInvoke = (functionName: string, payload: unknown) => Promise<void>;

export function asyncInvoker(region: string): AsyncInvoke {
  // Two attempts: a lost answer after the invoke was accepted runs the function twice, which every invoked handler tolerates.
  const lambda = new LambdaClient({ region, maxAttempts: 2 });
  return async (functionName, payload) => {
    const out = await lambda.send(
      new InvokeCommand({
        FunctionName: functionName,
        InvocationType: 'Event',
        Payload: new TextEncoder().encode(JSON.stringify(payload)),
      }),
    );
    if (out.StatusCode !== 202) throw new Error(`invoke ${functionName} answered ${out.StatusCode}`);
  };
}
