import { decodeCursor, encodeCursor, InvalidCursorError } from '../../../lib/downloads/service';
import { newId } from '../../../lib/ident';
import { HttpError } from '../../../lib/http/errors';
import { jsonBody, MAX_BODY_BYTES, pathId } from '../../../lib/http/request';
import { InvalidIdError } from '../../../lib/ident';
import { parseIngest, parseListQuery } from '../../../lib/downloads/requests';

const body = (text: string, headers: Record<string, string> = { 'content-type': 'application/json' }) => ({
  body: text,
  isBase64Encoded: false,
  headers,
});

describe('jsonBody', () => {
  it('parses JSON, base64 bodies included', () => {
    expect(jsonBody(body('{"a":1}'))).toEqual({ a: 1 });
    expect(jsonBody({ body: Buffer.from('{"a":2}').toString('base64'), isBase64Encoded: true, headers: {} })).toEqual({
      a: 2,
    });
  });

  it.each([
    ['oversize', body(`{"a":"${'x'.repeat(MAX_BODY_BYTES)}"}`), 413, 'PAYLOAD_TOO_LARGE'],
    ['not JSON', body('{a:1}'), 400, 'INVALID_REQUEST'],
    ['empty', body(''), 400, 'INVALID_REQUEST'],
    ['too deep', body('['.repeat(40) + ']'.repeat(40)), 400, 'INVALID_REQUEST'],
    ['form data', body('a=1', { 'Content-Type': 'application/x-www-form-urlencoded' }), 415, 'UNSUPPORTED_MEDIA_TYPE'],
  ])('refuses %s', (_name, event, status, code) => {
    expect(() => jsonBody(event)).toThrow(HttpError);
    try {
      jsonBody(event);
    } catch (err) {
      expect(err).toMatchObject({ status, code });
    }
  });
});

describe('request contracts', () => {
  it('takes a magnet or infohashes, refuses unknown fields and oversize lists', () => {
    expect(parseIngest({ magnet: 'magnet:?x' })).toEqual({ magnet: 'magnet:?x' });
    expect(parseIngest({ infohashes: ['a'], name: 'n' })).toEqual({ infohashes: ['a'], name: 'n' });
    expect(() => parseIngest({ magnet: 'm', admin: true })).toThrow(HttpError);
    expect(() => parseIngest({ infohashes: Array(17).fill('a') })).toThrow(HttpError);
    expect(() => parseIngest({ magnet: 'm', infohashes: ['a'] })).toThrow(HttpError);
    expect(() => parseIngest([])).toThrow(HttpError);
  });

  it('bounds list queries', () => {
    expect(parseListQuery(undefined)).toEqual({ q: undefined, limit: 20, cursor: undefined });
    expect(parseListQuery({ limit: '100', q: 'abcd' })).toEqual({ q: 'abcd', limit: 100, cursor: undefined });
    for (const limit of ['0', '101', '-1', '1e3', 'ten']) expect(() => parseListQuery({ limit })).toThrow(HttpError);
    expect(() => parseListQuery({ sort: 'name' })).toThrow(/unknown field/);
  });
});

describe('ids and cursors at the edge', () => {
  it('pathId normalises case and refuses non-ULIDs', () => {
    const id = newId();
    expect(pathId({ pathParameters: { id: id.toUpperCase() } })).toBe(id);
    expect(() => pathId({ pathParameters: { id: '123' } })).toThrow(InvalidIdError);
    expect(() => pathId({ pathParameters: {} })).toThrow(InvalidIdError);
  });

  it('cursors round-trip and forged ones are refused', () => {
    const id = newId();
    expect(decodeCursor(encodeCursor(id))).toBe(id);
    for (const forged of [
      '',
      'abc',
      Buffer.from('v1:{"PK":"x"}').toString('base64url'),
      Buffer.from(`v2:${id}`).toString('base64url'),
    ]) {
      expect(() => decodeCursor(forged)).toThrow(InvalidCursorError);
    }
  });
});
