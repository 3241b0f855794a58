import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { awsClients } from '../../../lib/aws/clients';
import { config } from '../../../lib/config';
import { newId } from '../../../lib/ident';
import { handler as getHandler } from '../../../functions/downloads/get';
import { handler as stateHandler } from '../../../functions/downloads/state';

/** The deployed handlers in-process, with every DynamoDB request counted on the real client. */
describe('the {id} edge costs no storage call', () => {
  let calls = 0;
  beforeAll(() => {
    const { dynamodb } = awsClients(config());
    dynamodb.middlewareStack.add((next) => async (args) => (calls++, next(args)), {
      step: 'initialize',
      name: 'countCalls',
    });
  });

  const invoke = (h: typeof getHandler, id: string, body?: string) =>
    // The authorizer's context, as API Gateway passes it: without it the handler refuses before parsing.
    h(
      {
        pathParameters: { id },
        body,
        headers: { 'content-type': 'application/json' },
        isBase64Encoded: false,
        requestContext: { authorizer: { lambda: { principal: 'test' } } },
      } as unknown as APIGatewayProxyEventV2,
      {
        awsRequestId: 'test',
      } as Context,
    );

  it.each([
    '123',
    '01arz3ndektsv4rrffq69g5fa',
    '01arz3ndektsv4rrffq69g5favv',
    '01arz3ndektsv4rrffq69g5fal',
    '../../etc/passwd',
  ])('invalid id %s → 404 with zero DynamoDB calls', async (id) => {
    calls = 0;
    const res = await invoke(getHandler, id);
    expect(res.statusCode).toBe(404);
    expect(JSON.parse(res.body).error.code).toBe('NOT_FOUND');
    const viaState = await invoke(stateHandler, id, '{"state":"paused"}');
    expect(viaState.statusCode).toBe(404);
    expect(calls).toBe(0);
  });

  it('a valid but unknown id is a 404 after exactly one read', async () => {
    calls = 0;
    expect((await invoke(getHandler, newId())).statusCode).toBe(404);
    expect(calls).toBe(1);
  });
});
