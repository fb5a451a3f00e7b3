import { Test } from '@nestjs/testing';
import { AgentModule } from '../agent.module';
import { MCP_TOOL_SKIPPED_MESSAGE, shownToolName } from '../agent.messages';
import { ScriptedModelProvider } from '../providers/scripted-model.provider';
import { mcpToolSegment } from './mcp-tool-name';
import { validateMcpServers } from './validate-mcp-server-options';

describe('mcpToolSegment', () => {
  it.each([
    ['get_weather', 'get_weather'],
    ['get-weather', 'get_weather'],
    ['getWeather', 'get_weather'],
    ['HTTPStatus', 'http_status'],
    ['files/read', 'files_read'],
    ['ns.tool', 'ns_tool'],
    ['2fa', 't_2fa'],
    ['_private', 't__private'],
    ['Ünïcode', 't__n_code'],
  ])('maps %s to %s, a valid skill-name segment', (tool, segment) => {
    expect(mcpToolSegment(tool)).toBe(segment);
    expect(`server.${mcpToolSegment(tool)}`).toMatch(/^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$/);
  });
});

describe('tool names in log lines', () => {
  it('escapes control and line-separator characters and cuts long names, so a server cannot write log lines', () => {
    const hostile = 'quote\n[Nest] 1 - LOG [Agent] all good\r\u2028\u0000';
    const line = MCP_TOOL_SKIPPED_MESSAGE('evil', hostile, 'evil.quote', 'its inputSchema cannot be compiled');
    for (const c of ['\n', '\r', '\u2028', '\u0000']) expect(line).not.toContain(c);
    expect(line).toContain("tool 'quote\\u000a[Nest] 1 - LOG [Agent] all good\\u000d\\u2028\\u0000'");
    expect(shownToolName('x'.repeat(500))).toBe(`${'x'.repeat(128)}...`);
  });
});

describe('validateMcpServers', () => {
  const bad = (entry: unknown) => () => validateMcpServers([entry]);

  it('fills the defaults', () => {
    const [http, stdio] = validateMcpServers([
      { name: 'remote', url: 'https://tools.example.com/mcp', headers: { Authorization: 'Bearer x' } },
      { name: 'local', command: 'mcp-weather', args: ['--stdio'], env: { KEY: 'v' }, cwd: '/tmp' },
    ]);
    expect(http).toMatchObject({
      transport: 'http',
      required: true,
      timeoutMs: 30_000,
      connectTimeoutMs: 10_000,
      tenantScoped: true,
      maxResultBytes: 262_144,
      maxMessageBytes: 8 * 1024 * 1024,
      maxTools: 1000,
      maxSchemaBytes: 65_536,
      maxDescriptionLength: 4096,
      maxToolBytesPerServer: 524_288,
      trustReadOnlyHint: false,
      reconnectDelayMs: 500,
      reconnectMaxDelayMs: 30_000,
    });
    expect(http.actions.size).toBe(0);
    expect(http.url?.href).toBe('https://tools.example.com/mcp');
    expect(stdio).toMatchObject({ transport: 'stdio', command: 'mcp-weather', args: ['--stdio'], env: { KEY: 'v' }, cwd: '/tmp' });
    expect(validateMcpServers(undefined)).toEqual([]);
  });

  it('names the field to fix', () => {
    expect(bad({ name: 'Weather', command: 'x' })).toThrow(/mcpServers\[0\] \('Weather'\): name must be one lower-case word/);
    expect(bad({ name: 'my.weather', command: 'x' })).toThrow(/name must be one lower-case word/);
    expect(bad({ command: 'x' })).toThrow(/mcpServers\[0\]: name must be/);
    expect(bad({ name: 'w' })).toThrow(/give exactly one of command .* or url/);
    expect(bad({ name: 'w', command: 'x', url: 'http://h/mcp' })).toThrow(/give exactly one of command .* or url/);
    expect(bad({ name: 'w', url: 'ftp://h/mcp' })).toThrow(/url must be http: or https: \(got ftp:\)/);
    expect(bad({ name: 'w', url: 'not a url' })).toThrow(/url is not a valid URL/);
    expect(bad({ name: 'w', url: 'http://h/mcp', headers: { Authorization: 42 } })).toThrow(
      /headers\.Authorization must be a string \(got a number\)/,
    );
    expect(bad({ name: 'w', url: 'http://h/mcp', headers: 'Bearer x' })).toThrow(/headers must be an object of string values/);
    expect(bad({ name: 'w', url: 'http://h/mcp', env: { A: 'b' } })).toThrow(/env belongs to a stdio server/);
    expect(bad({ name: 'w', command: 'x', headers: { A: 'b' } })).toThrow(/headers belongs to a url server/);
    expect(bad({ name: 'w', command: 'x', args: 'run' })).toThrow(/args must be an array of strings/);
    expect(bad({ name: 'w', command: 'x', env: { A: 1 } })).toThrow(/env\.A must be a string/);
    expect(bad({ name: 'w', command: 'x', timeoutMs: 0 })).toThrow(/timeoutMs must be a whole number of ms/);
    expect(bad({ name: 'w', command: 'x', required: 'yes' })).toThrow(/required must be true or false/);
    expect(bad({ name: 'w', command: 'x', maxResultBytes: 0 })).toThrow(
      /maxResultBytes must be a whole number of bytes from 1 to 16777216 \(got 0\)/,
    );
    expect(bad({ name: 'w', command: 'x', maxResultBytes: 1.5 })).toThrow(/maxResultBytes must be a whole number of bytes/);
    expect(bad({ name: 'w', command: 'x', maxResultBytes: 32 * 1024 * 1024 })).toThrow(/maxResultBytes must be a whole number of bytes/);
    expect(validateMcpServers([{ name: 'w', command: 'x', maxResultBytes: 1024 }])[0].maxResultBytes).toBe(1024);
    expect(bad({ name: 'w', command: 'x', maxTools: 0 })).toThrow(/maxTools must be a whole number of tools from 1 to 100000 \(got 0\)/);
    expect(bad({ name: 'w', command: 'x', maxTools: '10' })).toThrow(/maxTools must be a whole number of tools/);
    expect(validateMcpServers([{ name: 'w', command: 'x', maxTools: 5 }])[0].maxTools).toBe(5);
    expect(bad({ name: 'w', command: 'x', trustReadOnlyHint: 'no' })).toThrow(/trustReadOnlyHint must be true or false/);
    expect(validateMcpServers([{ name: 'w', command: 'x', trustReadOnlyHint: false }])[0].trustReadOnlyHint).toBe(false);
    expect(bad({ name: 'w', command: 'x', header: {} })).toThrow(/unknown option 'header'/);
    expect(bad({ name: 'w', command: 'x', maxSchemaBytes: 0 })).toThrow(/maxSchemaBytes must be a whole number of bytes from 1 to 4194304/);
    expect(bad({ name: 'w', command: 'x', maxSchemaBytes: 4096, maxToolBytesPerServer: 1024 })).toThrow(
      /maxToolBytesPerServer \(1024\) is smaller than maxSchemaBytes \(4096\): a tool of that schema size could never be registered/,
    );
    expect(bad({ name: 'w', command: 'x', maxDescriptionLength: 100_000 })).toThrow(
      /maxDescriptionLength must be a whole number of characters/,
    );
    expect(bad({ name: 'w', command: 'x', maxMessageBytes: 1000 })).toThrow(/maxMessageBytes must be at least 65536 bytes/);
    expect(bad({ name: 'w', command: 'x', maxMessageBytes: 100_000, maxResultBytes: 200_000 })).toThrow(
      /maxMessageBytes \(100000\) is smaller than maxResultBytes \(200000\)/,
    );
    // A large maxResultBytes raises the default message cap (a result may come as text and as structuredContent).
    expect(validateMcpServers([{ name: 'w', command: 'x', maxResultBytes: 16 * 1024 * 1024 }])[0].maxMessageBytes).toBe(32 * 1024 * 1024);
    expect(bad({ name: 'w', command: 'x', actions: { lookup: 'readonly' } })).toThrow(
      /actions\["lookup"\] must be 'read', 'propose' or 'execute' \(got "readonly"\)/,
    );
    expect(bad({ name: 'w', command: 'x', actions: ['lookup'] })).toThrow(/actions must be an object of tool names/);
    expect(validateMcpServers([{ name: 'w', command: 'x', actions: { 'get-weather': 'read' } }])[0].actions.get('get-weather')).toBe(
      'read',
    );
    expect(bad({ name: 'w', command: 'x', reconnectDelayMs: 5000, reconnectMaxDelayMs: 1000 })).toThrow(
      /reconnectMaxDelayMs \(1000\) is smaller than reconnectDelayMs \(5000\)/,
    );
    expect(() =>
      validateMcpServers([
        { name: 'w', command: 'x' },
        { name: 'w', url: 'http://h/mcp' },
      ]),
    ).toThrow(/mcpServers\[1\] \('w'\): name is taken/);
  });

  it('never echoes a header value or the URL beyond its protocol', () => {
    let message = '';
    try {
      validateMcpServers([{ name: 'w', url: 'http://h/mcp', headers: { Authorization: 'Bearer s3cret', X: null as unknown as string } }]);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/headers\.X must be a string/);
    expect(message).not.toContain('s3cret');
  });

  it('refuses a URL with a user name or password, and headers that could not be sent, never showing the secret', () => {
    const messageOf = (entry: unknown): string => {
      try {
        validateMcpServers([entry]);
      } catch (err) {
        return (err as Error).message;
      }
      return '';
    };
    const userinfo = messageOf({ name: 'w', url: 'http://alice:S3CRET-PW@h/mcp?key=QUERYSECRET' });
    expect(userinfo).toMatch(/url must not hold a user name or password .*put credentials in headers/);
    const crlf = messageOf({ name: 'w', url: 'http://h/mcp', headers: { Authorization: 'Bearer sk-LIVE-HEADERSECRET\r\nX-Injected: 1' } });
    expect(crlf).toMatch(/headers\.Authorization has an invalid value \(the value is not shown\): it holds a CR, LF, NUL/);
    const nul = messageOf({ name: 'w', url: 'http://h/mcp', headers: { 'X-Key': 'k-NULSECRET\u0000' } });
    expect(nul).toMatch(/headers\.X-Key has an invalid value/);
    const del = messageOf({ name: 'w', url: 'http://h/mcp', headers: { 'X-Key': 'k-DELSECRET\u007f' } });
    expect(del).toMatch(/headers\.X-Key has an invalid value/);
    const badName = messageOf({ name: 'w', url: 'http://h/mcp', headers: { 'X-Key\r\nX-Evil': 'NAMESECRET-VALUE' } });
    expect(badName).toMatch(/headers has an invalid name "X-Key\\r\\nX-Evil": a header name is letters, digits/);
    expect(messageOf({ name: 'w', url: 'http://h/mcp', headers: { 'X Key': 'v' } })).toMatch(/headers has an invalid name "X Key"/);
    for (const [message, secret] of [
      [userinfo, 'S3CRET-PW'],
      [userinfo, 'QUERYSECRET'],
      [crlf, 'HEADERSECRET'],
      [nul, 'NULSECRET'],
      [del, 'DELSECRET'],
      [badName, 'NAMESECRET'],
    ])
      expect(message).not.toContain(secret);
    // Tabs, spaces and Latin-1 are fine in a value.
    expect(validateMcpServers([{ name: 'w', url: 'http://h/mcp', headers: { 'X-Note': 'a\tb c é' } }])[0].headers).toEqual({
      'X-Note': 'a\tb c é',
    });
  });

  it('fails the module at boot with that message', async () => {
    const agent = { name: 'a', provider: new ScriptedModelProvider([{ text: 'ok' }]), skills: [], guard: { allow: ['w.t'] } };
    const module = Test.createTestingModule({
      imports: [
        AgentModule.forRoot({
          agents: [agent],
          mcpServers: [{ name: 'w', url: 'file:///etc/passwd' }],
          guard: { auditStore: 'memory', quotaStore: 'memory' },
        }),
      ],
    });
    await expect(module.compile()).rejects.toThrow(/Invalid mcpServers\[0\] \('w'\): url must be http: or https:/);
  });
});
