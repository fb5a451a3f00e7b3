// zmodu and MCP both ways, in plain JavaScript (no build): decorators are applied by hand, as tsc would.
//  1. An agent calls a tool of an external MCP server (weather-server.mjs, over stdio) through the guard: the tool is
//     the skill weather.get_weather, allowed by the agent's policy; weather.send_alert is not, so it is refused.
//  2. The app's own skill (clock.now) is served over MCP (Streamable HTTP at /mcp, McpModule), and the official v2
//     client lists and calls it. Every call, both ways, is audited in the embedded database.
// Prints one JSON line.
import 'reflect-metadata';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AgentModule, AgentRegistry, lastObservation, ScriptedModelProvider } from '@zmodu/agent';
import { embeddedDataSourceOptions, openEmbeddedDatabase } from '@zmodu/db';
import { AgentAuditLog, zmoduMigrations } from '@zmodu/guard';
import { McpModule } from '@zmodu/mcp';
import { Skill } from '@zmodu/skills';

class ClockSkills {
  now(args) {
    return { zone: args.zone, hour: 9 };
  }
}
const now = Object.getOwnPropertyDescriptor(ClockSkills.prototype, 'now');
const clock = {
  name: 'clock.now',
  action: 'read',
  description: 'The hour in a time zone',
  parameters: { type: 'object', properties: { zone: { type: 'string', maxLength: 64 } }, required: ['zone'] },
};
Object.defineProperty(ClockSkills.prototype, 'now', Skill(clock)(ClockSkills.prototype, 'now', now) ?? now);
Injectable()(ClockSkills);

// The scripted model (no key): it reads the weather, tries to send an alert (refused by the policy), then answers.
let weather;
const model = new ScriptedModelProvider([
  { toolCalls: [{ name: 'weather.get_weather', arguments: { city: 'Paris' } }] },
  (request) => {
    weather = lastObservation(request);
    return { toolCalls: [{ name: 'weather.send_alert', arguments: { message: 'Take an umbrella' } }] };
  },
  () => ({ text: `Weather in Paris: ${JSON.stringify(weather)}` }),
]);

// Who calls over MCP. A real app reads it from its authentication (req.user, as its guard sets it).
const caller = { tenantId: 'acme', userId: 'ada', permissions: [] };

class AppModule {}
Module({
  imports: [
    TypeOrmModule.forRootAsync({
      useFactory: async () =>
        embeddedDataSourceOptions(await openEmbeddedDatabase(), {
          // The tables of the @zmodu packages imported above (the audit log, the token quota, ...).
          migrations: zmoduMigrations(),
          migrationsRun: true,
        }),
    }),
    AgentModule.forRoot({
      agents: [
        {
          name: 'forecaster',
          provider: model,
          skills: ['weather.get_weather', 'weather.send_alert'],
          guard: { allow: ['weather.get_weather'] },
          systemPrompt: 'You tell the weather.',
        },
      ],
      mcpServers: [
        {
          name: 'weather',
          command: process.execPath,
          args: [fileURLToPath(new URL('./weather-server.mjs', import.meta.url))],
          // The app names what a tool does: the server's own readOnlyHint is not taken as evidence (without this line,
          // get-weather is an execute-class skill, and this agent may not execute).
          actions: { 'get-weather': 'read' },
        },
      ],
    }),
    McpModule.forRoot({ path: '/mcp', policy: { allow: ['clock.now'] }, principal: () => caller }),
  ],
  providers: [ClockSkills],
})(AppModule);

const app = await NestFactory.create(AppModule, { logger: ['error'] });
await app.listen(0, '127.0.0.1');
try {
  // 1. The agent, through the guard, on the external server's tools.
  const run = await app.get(AgentRegistry).get('forecaster').run('Weather in Paris?', { tenantId: 'acme', userId: 'ada' });
  // 2. The app's skill over MCP, with the official v2 client (the 2026-07-28 revision when the server offers it).
  const { port } = app.getHttpServer().address();
  const client = new Client({ name: 'example', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
  const { tools } = await client.listTools();
  const called = await client.callTool({ name: 'clock.now', arguments: { zone: 'Europe/Paris' } });
  await client.close();
  const audit = app.get(AgentAuditLog);
  await audit.flush();
  const entries = await audit.query({ tenantId: 'acme' });
  console.log(
    JSON.stringify({
      answer: run.answer,
      agentCalls: run.steps.flatMap((s) => s.toolCalls.map((c) => `${c.name} ${c.decision}${c.cause ? ` ${c.cause}` : ''}`)),
      mcpTools: tools.map((t) => t.name),
      mcpCall: called.structuredContent ?? null,
      audit: entries.map((e) => `${e.skill} ${e.decision} ${e.outcome}`).sort(),
    }),
  );
} finally {
  await app.close();
}
