import { createServer, get, IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeWebResponse } from './mcp-web-http';

/** The answer of a node server that writes `response` with writeWebResponse, as a client reads it. */
async function served(response: () => Response): Promise<{ res: IncomingMessage; body: string }> {
  const server = createServer((_req, res) => void writeWebResponse(res, response(), new AbortController().signal));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    return await new Promise((resolve, reject) =>
      get({ host: '127.0.0.1', port, path: '/' }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ res, body }));
      }).on('error', reject),
    );
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('writeWebResponse: a web Response onto a node response', () => {
  it('keeps every header as sent: one named like an Object member, and each Set-Cookie on its own', async () => {
    const headers = new Headers({ 'content-type': 'application/json', constructor: 'y', 'mcp-session-id': 's-1' });
    headers.append('__proto__', 'x'); // (an object literal's __proto__ key would set its prototype, not a header)
    headers.append('set-cookie', 'a=1; Path=/');
    headers.append('set-cookie', 'b=2; Path=/');
    const { res, body } = await served(() => new Response('{"ok":true}', { status: 202, headers }));
    expect(res.statusCode).toBe(202);
    expect(body).toBe('{"ok":true}');
    const raw: Array<[string, string]> = [];
    for (let i = 0; i < res.rawHeaders.length; i += 2) raw.push([res.rawHeaders[i].toLowerCase(), res.rawHeaders[i + 1]]);
    expect(raw).toEqual(
      expect.arrayContaining([
        ['content-type', 'application/json'],
        ['__proto__', 'x'],
        ['constructor', 'y'],
        ['mcp-session-id', 's-1'],
        ['set-cookie', 'a=1; Path=/'],
        ['set-cookie', 'b=2; Path=/'],
      ]),
    );
    expect(res.headers['set-cookie']).toEqual(['a=1; Path=/', 'b=2; Path=/']);
  });
});
