import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdioTransport } from '@modelcontextprotocol/client/stdio';
import { DataSource } from 'typeorm';
import { ALPHA, BETA, ENTITIES, KPIS, seedBusinessData } from '../libs/data/src/__fixtures__/business-fixture';
import { createTestDatabase, TestDatabase } from '@zmodu/db/testing';
import { toolText as text } from '../libs/mcp/src/__fixtures__/tool-text';

const ROOT = join(__dirname, '..');
const BIN = join(ROOT, 'bin', 'zmodu.js');

// Each test spawns the CLI from its TypeScript sources (bin/zmodu.js: each file transpiled once, then cached).
jest.setTimeout(180_000);

describe('zmodu ai mcp: the skills over stdio, with the official MCP client', () => {
  let db: TestDatabase;
  let dir: string;
  let config: string;

  /** Spawn `zmodu ai mcp` as an MCP client does, and connect; stderr is collected, every stdout line must be JSON-RPC. */
  async function serve(...flags: string[]) {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'ai', 'mcp', '--config', config, ...flags],
      cwd: ROOT,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const errors: Error[] = [];
    const client = new Client({ name: 'stdio-e2e', version: '1.0.0' });
    client.onerror = (err) => errors.push(err);
    await client.connect(transport);
    return { client, errors, stderr: () => stderr, close: () => client.close() };
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    const ds = new DataSource(await db.options());
    await ds.initialize();
    await seedBusinessData(ds, 20);
    await ds.destroy(); // the CLI is another process: PGlite's folder is opened by one process at a time
    dir = mkdtempSync(join(tmpdir(), 'zmodu-mcp-'));
    config = join(dir, 'zmodu.config.json');
    writeFileSync(
      config,
      JSON.stringify({
        database: db.location,
        tenantColumn: 'tenant_id',
        // orders writable, so entity.create exists (and the policy keeps it closed).
        entities: ENTITIES.map((e) => (e.name === 'order' ? { ...e, writable: ['note'] } : e)),
        kpis: KPIS,
        skills: ['entity.lookup', 'entity.list', 'kpi.query', 'entity.create'],
        fence: { mode: 'off' },
        policy: { allow: ['entity.lookup', 'entity.list', 'kpi.query', 'entity.create'], allowExecute: false },
      }),
    );
  });

  afterAll(async () => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    await db?.drop();
  });

  it('lists and calls under the policy and the given tenant, refuses with reasons, names a bad argument, writes only JSON-RPC', async () => {
    const mcp = await serve('--tenant', ALPHA, '--user', 'u1');
    try {
      const { tools } = await mcp.client.listTools();
      // entity.create is execute class and the policy keeps that closed: not listed.
      expect(tools.map((t) => [t.name, t.annotations?.readOnlyHint])).toEqual([
        ['entity.list', true],
        ['entity.lookup', true],
        ['kpi.query', true],
      ]);

      const mine = await mcp.client.callTool({ name: 'entity.lookup', arguments: { entity: 'order', id: 1 } });
      expect(mine.isError).toBeFalsy();
      expect(JSON.parse(text(mine))).toMatchObject({ entity: 'order', record: { id: 1, tenant_id: ALPHA } });
      // Beta's order (ids from 100000) from alpha's session: not found, and nothing of beta in the answer.
      const theirs = await mcp.client.callTool({ name: 'entity.lookup', arguments: { entity: 'order', id: 100000 } });
      expect(text(theirs)).not.toMatch(/BETA|beta|"tenant_id"|"customer_id"/);
      // No argument picks the tenant: the schema refuses one, naming it.
      const switched = await mcp.client.callTool({ name: 'entity.list', arguments: { entity: 'order', tenant: BETA } });
      expect(JSON.parse(text(switched))).toMatchObject({ error: 'InvalidArguments', problems: [{ path: '/tenant' }] });

      const denied = await mcp.client.callTool({ name: 'entity.create', arguments: { entity: 'order', values: {} } });
      expect(denied.isError).toBe(true);
      expect(JSON.parse(text(denied))).toEqual({ error: 'ToolDenied', reason: 'denied_execute_class' });
      const unknown = await mcp.client.callTool({ name: 'db.query', arguments: { sql: 'SELECT 1' } });
      expect(JSON.parse(text(unknown))).toEqual({ error: 'ToolDenied', reason: 'denied_not_listed' });

      const bad = await mcp.client.callTool({ name: 'entity.lookup', arguments: { entity: 'order' } });
      expect(bad.isError).toBe(true);
      expect(JSON.parse(text(bad))).toMatchObject({ error: 'InvalidArguments', problems: [{ path: '/id' }] });

      expect(mcp.errors).toEqual([]);
      expect(mcp.stderr()).toMatch(/MCP server on stdio, 3 tool\(s\) for user u1 of tenant alpha/);
    } finally {
      await mcp.close();
    }
  });

  it('serves a 2026-07-28 client too (server/discover, no initialize), under the same policy and tenant', async () => {
    // A subclass probes in place: the SDK's own transport would probe on a sibling process, and the embedded
    // database's folder is opened by one process at a time.
    class InPlaceStdio extends ModernStdioTransport {}
    const transport = new InPlaceStdio({
      command: process.execPath,
      args: [BIN, 'ai', 'mcp', '--config', config, '--tenant', ALPHA, '--user', 'u1'],
      cwd: ROOT,
      stderr: 'pipe',
    });
    const sent: string[] = [];
    const send = transport.send.bind(transport);
    transport.send = (message) => (sent.push('method' in message ? message.method : 'answer'), send(message));
    const client = new ModernClient({ name: 'stdio-e2e', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(transport);
    try {
      expect(client.getProtocolEra()).toBe('modern');
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['entity.list', 'entity.lookup', 'kpi.query']);
      const mine = await client.callTool({ name: 'entity.lookup', arguments: { entity: 'order', id: 1 } });
      expect(JSON.parse(text(mine))).toMatchObject({ entity: 'order', record: { id: 1, tenant_id: ALPHA } });
      const denied = await client.callTool({ name: 'entity.create', arguments: { entity: 'order', values: {} } });
      expect(JSON.parse(text(denied))).toEqual({ error: 'ToolDenied', reason: 'denied_execute_class' });
      expect(sent[0]).toBe('server/discover');
      expect(sent).not.toContain('initialize');
    } finally {
      await client.close();
    }
  });

  it('lists an execute skill only with the permission it needs, annotated destructive', async () => {
    const open = join(dir, 'execute.config.json');
    writeFileSync(
      open,
      JSON.stringify({
        database: db.location,
        tenantColumn: 'tenant_id',
        entities: [{ name: 'order', table: 'orders', pk: 'id', tenantColumn: 'tenant_id', writable: ['note'] }],
        skills: ['entity.lookup', 'entity.update'],
        fence: { mode: 'off' },
        policy: { allow: ['entity.lookup', 'entity.update'], allowExecute: true },
      }),
    );
    config = open;
    const without = await serve('--tenant', ALPHA, '--user', 'u1', '--permissions', 'market:read');
    try {
      expect((await without.client.listTools()).tools.map((t) => t.name)).toEqual(['entity.lookup']);
      const refused = await without.client.callTool({
        name: 'entity.update',
        arguments: { entity: 'order', id: 1, values: { note: 'x' } },
      });
      expect(JSON.parse(text(refused))).toEqual({ error: 'PermissionDenied', reason: 'missing_permission', permission: 'entity:write' });
    } finally {
      await without.close();
    }
    const writer = await serve('--tenant', ALPHA, '--user', 'u1', '--permissions', 'entity:write');
    try {
      const tools = (await writer.client.listTools()).tools;
      expect(tools.map((t) => [t.name, t.annotations])).toEqual([
        ['entity.lookup', { readOnlyHint: true, destructiveHint: false }],
        ['entity.update', { readOnlyHint: false, destructiveHint: true }],
      ]);
      const updated = await writer.client.callTool({
        name: 'entity.update',
        arguments: { entity: 'order', id: 1, values: { note: 'via mcp' } },
      });
      expect(updated.isError).toBeFalsy();
      expect(JSON.parse(text(updated))).toMatchObject({ record: { id: 1, note: 'via mcp', tenant_id: ALPHA } });
    } finally {
      await writer.close();
    }
  });

  it('refuses to start without --tenant and --user (usage error, exit 2)', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'ai', 'mcp', '--config', config],
      cwd: ROOT,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: 'stdio-e2e', version: '1.0.0' });
    await expect(client.connect(transport)).rejects.toThrow();
    await client.close().catch(() => undefined);
    expect(stderr).toMatch(/give --tenant T and --user U/);
  });
});
