import { randomUUID } from 'node:crypto';
import { DynamicModule, MiddlewareConsumer, Module, NestModule, RequestMethod, ValidationPipe } from '@nestjs/common';
import { APP_GUARD, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { ThrottlerModule } from '@nestjs/throttler';
import { JwtModule } from '@nestjs/jwt';
import { TerminusModule } from '@nestjs/terminus';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AgentJobsModule, AgentModule, AgentWorkerModule } from '@zmodu/agent';
import { DataSkillsModule } from '@zmodu/data';
import { ChannelSpec, NotifyModule, OutboxModule } from '@zmodu/outbox';
import { AdminCache, AdminModule, AdminSkillsModule, ZmoduHealthModule } from '@zmodu/admin';
import { CACHE_MANAGER, CacheModule } from '@nestjs/cache-manager';
import { ZmoduHttpModule } from '@zmodu/http';
import { McpModule } from '@zmodu/mcp';
import { Redactor, zmoduMigrations } from '@zmodu/guard';
import { MemoryModule, MemoryRecall } from '@zmodu/memory';
import { PipelineModule } from '@zmodu/pipeline';
import { zmoduPinoOptions } from '@zmodu/skills';
import { JsonLogsModule } from './logging/json-logs.module';
import type { Request } from 'express';
import { ClsModule, ClsService } from 'nestjs-cls';
import { adminAgent, analystAgent, deskAgent, opsAgent, schedulerAgent, traderAgent } from './agents';
import { sampleAdminSkills } from './admin/admin-skills.config';
import { ORDER_PIPELINE } from './trading/order-pipeline';
import { AgentsController } from './agents/agents.controller';
import { PERMISSIONS } from './auth/auth.constants';
import { JwtAuthGuard } from './auth/jwt-auth.guard';
import { jwtModuleOptions } from './auth/jwt-options';
import { PermissionsGuard } from './auth/permissions.guard';
import { RequestIdInterceptor } from './auth/request-id.interceptor';
import { HealthController } from './health.controller';
import { sampleMetricsModule } from './metrics';
import { DeskJobs, SAMPLE_JOB_PERMISSIONS, SAMPLE_SCHEDULABLE_TASKS } from './jobs/desk-jobs';
import { JobsController } from './jobs/jobs.controller';
import { MemoryController } from './memory/memory.controller';
import { SAMPLE_MCP_PATH, SAMPLE_MCP_POLICY } from './mcp.policy';
import { BodyLimitsMiddleware } from './edge/body-limits.middleware';
import { CallerThrottlerGuard } from './edge/caller-throttler.guard';
import { EDGE_OPTIONS, edgeOptions } from './edge/edge.options';
import { SecurityHeadersMiddleware } from './edge/security-headers.middleware';
import { SampleTrading1764461000000 } from './migrations/1764461000000-sample-trading';
import { SampleOrderCancel1764461500000 } from './migrations/1764461500000-sample-order-cancel';
import { SampleFence1764470000000 } from './migrations/1764470000000-sample-fence';
import { SampleFenceUpgrade1764900000000 } from './migrations/1764900000000-sample-fence-upgrade';
import { SAMPLE_DATA_ENTITIES } from './trading/data-entities';
import { cancelOrderCommand, deskLogSink, orderCancelledHandler } from './trading/order-commands';
import { SAMPLE_OPTIONS, SampleAppOptions } from './sample.options';
import { Instrument } from './trading/instrument.entity';
import { Order } from './trading/order.entity';
import { TradingSeed } from './trading/trading.seed';
import { TradingSkills } from './trading/trading.skills';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{8,64}$/;

export const SAMPLE_ENTITIES = [Instrument, Order];
/** The tables of every @zmodu package this app imports (zmoduMigrations), then the sample's own. */
export const SAMPLE_MIGRATIONS = zmoduMigrations(
  SampleTrading1764461000000,
  SampleOrderCancel1764461500000,
  SampleFence1764470000000,
  SampleFenceUpgrade1764900000000,
);

/**
 * The trading assistant: agents over the trading skills, behind the HTTP edge: security headers,
 * body limits, JWT auth, a rate limit per caller, permission checks, and one exception filter;
 * the same skills over MCP at /mcp.
 */
@Module({})
export class AppModule implements NestModule {
  static register(options: SampleAppOptions): DynamicModule {
    const edge = edgeOptions(options.edge);
    return {
      module: AppModule,
      imports: [
        ClsModule.forRoot({
          global: true,
          middleware: {
            mount: true,
            generateId: true,
            idGenerator: (req: Request) => {
              const given = req.headers['x-request-id'];
              return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
            },
          },
        }),
        // JSON logs: the run (run id, tenant, agent) on every line written during one, credential headers censored, and
        // each line redacted by GuardModule's Redactor. main.ts makes it Nest's logger (app.useLogger).
        JsonLogsModule.forRootAsync({
          inject: [Redactor],
          useFactory: (redactor: Redactor) => ({
            pino: { level: options.logging?.level ?? 'silent', ...zmoduPinoOptions(redactor) },
            destination: options.logging?.destination,
          }),
        }),
        TerminusModule.forRoot({ logger: false }),
        // Readiness checks of the outbox backlog and (cluster mode) the pg-boss goal queue, beside the database's.
        ZmoduHealthModule,
        // The rate limit per caller (CallerThrottlerGuard keys it on the token's tenant and subject).
        ThrottlerModule.forRoot({ throttlers: [{ name: 'default', ttl: edge.rateWindowMs, limit: edge.rateLimit }] }),
        JwtModule.register(jwtModuleOptions(options.jwtSecret)),
        TypeOrmModule.forRootAsync({
          useFactory: async () => ({
            ...(await options.dataSource()),
            entities: SAMPLE_ENTITIES,
            migrations: SAMPLE_MIGRATIONS,
            migrationsRun: true,
          }),
        }),
        // Tenant and user memory (zmodu_memory): the trader's prompt gets the caller's notes, memory.remember/recall.
        // memory.remember needs memory:write; memory.recall needs none: it reads only the caller's own notes, which a run
        // of an agent with `memory` already puts in its prompt.
        MemoryModule.forRoot({ store: 'typeorm', permissions: { remember: PERMISSIONS.memoryWrite } }),
        // Each agent's scripted model, or the one real model of options.model (the same guards, skills and budgets).
        // Goals posted to POST /agents/:name/goals run in the background, stored in zmodu_agent_runs.
        // Scheduled jobs (zmodu_agent_jobs): DeskJobs' @AgentJob, and the tasks the scheduler agent may schedule.
        AgentModule.forRootAsync({
          inject: [MemoryRecall],
          useFactory: (memory: MemoryRecall) => ({ agents: sampleAgents(options, memory) }),
        }),
        AgentWorkerModule.forRoot({ runStore: 'typeorm', ...options.worker, ...(options.queue ? { queue: options.queue } : {}) }),
        AgentJobsModule.forRoot({ store: 'typeorm', schedulableTasks: SAMPLE_SCHEDULABLE_TASKS, permissions: SAMPLE_JOB_PERMISSIONS }),
        // order.submit is a staged skill: proposed with approval.submit, priced by the desk, reviewed,
        // approved by humans when large, then run by the pipeline through the dispatcher.
        PipelineModule.forRoot(ORDER_PIPELINE),
        // command.execute (order.cancel) through the transactional outbox, and notification.send.
        OutboxModule.forRoot({ commands: [cancelOrderCommand], handlers: { 'order.cancelled': orderCancelledHandler } }),
        NotifyModule.forRoot({ channels: notificationChannels() }),
        // The admin HTTP API for the caller's tenant (request.user, as JwtAuthGuard sets it): approvals, outbox, the audit
        // chain, agents, token usage and the skill catalog, each behind its permission (admin:outbox, admin:audit, ...),
        // and the approvals console at /admin/console (sign in with a token of `npm run token`).
        AdminModule.forRoot({
          outbox: true,
          audit: true,
          agents: true,
          quota: true,
          skills: true,
          config: true,
          console: { title: 'Desk approvals' },
        }),
        // The admin skills (admin.cache.*, admin.config.*, ...), reachable only by an agent whose allow list names them
        // (the admin agent): the app's cache-manager cache as 'quotes', and the desk's config keys (zmodu_admin_config).
        CacheModule.register({ isGlobal: true, ttl: 60_000 }),
        AdminSkillsModule.forRootAsync({ inject: [CACHE_MANAGER], useFactory: (cache: AdminCache) => sampleAdminSkills(cache) }),
        // GET /metrics (Prometheus): the scrape token sees every series, a JWT with admin:metrics its tenant's (see sampleMetricsModule).
        sampleMetricsModule(options),
        // db.query, entity.lookup/list (read-only, scoped to the caller's desk) over the sample tables;
        // db.query also runs under the database's fence (installed by a migration), required here.
        DataSkillsModule.forRoot({
          entities: SAMPLE_DATA_ENTITIES,
          skills: ['db.query', 'entity.lookup', 'entity.list'],
          requiredPermission: PERMISSIONS.marketRead,
          fence: { mode: 'required' },
          strictData: true, // a data-model hazard (see zmodu ai audit-data) is a boot error
        }),
        // The HTTP edge of @zmodu/http: the exception filter of every library exception (404 unknown agent, 400 bad goal,
        // 409, 429, 503 with Retry-After for a database away; JSON-RPC errors on /mcp), the caller contract (request.user,
        // as JwtAuthGuard sets it), and the runs controller: POST /agents/:name/runs (JSON or Server-Sent Events), POST
        // /agents/:name/goals, GET /agents/runs/:id, behind agent:run. The request id (x-request-id or a new UUID) is the
        // run id of the runs a request starts, and what its error bodies and log lines name.
        ZmoduHttpModule.forRootAsync({
          exceptionFilter: true,
          runsController: true,
          inject: [ClsService],
          useFactory: (cls: ClsService) => ({
            requestId: () => (cls.isActive() ? cls.getId() : undefined),
            runPermission: PERMISSIONS.agentRun,
            mcpPath: SAMPLE_MCP_PATH,
          }),
        }),
        // The skill catalog over MCP (Streamable HTTP) at /mcp, behind the same JWT guard: every request's
        // caller is req.user as JwtAuthGuard sets it; a session belongs to the tenant and user that opened it.
        // The throttler counts HTTP requests; McpModule counts the calls in them (each call of a batch), at the same rate.
        McpModule.forRoot({
          path: SAMPLE_MCP_PATH,
          policy: SAMPLE_MCP_POLICY,
          rateLimit: { limit: edge.rateLimit, windowMs: edge.rateWindowMs },
          ...(options.mcpAuthorization ? { authorization: options.mcpAuthorization } : {}),
        }),
      ],
      controllers: [AgentsController, HealthController, MemoryController, JobsController],
      providers: [
        { provide: SAMPLE_OPTIONS, useValue: options },
        { provide: EDGE_OPTIONS, useValue: edge },
        TradingSkills,
        TradingSeed,
        DeskJobs,
        // Guards run in this order: who is calling, how often, what may they do.
        { provide: APP_GUARD, useClass: JwtAuthGuard },
        { provide: APP_GUARD, useClass: CallerThrottlerGuard },
        { provide: APP_GUARD, useClass: PermissionsGuard },
        { provide: APP_INTERCEPTOR, useClass: RequestIdInterceptor },
        { provide: APP_PIPE, useValue: new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true }) },
      ],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(SecurityHeadersMiddleware, BodyLimitsMiddleware).forRoutes({ path: '*path', method: RequestMethod.ALL });
  }
}

function sampleAgents(options: SampleAppOptions, memory: MemoryRecall) {
  const real = options.model?.provider;
  return [
    traderAgent(options.traderBudget, real, memory),
    analystAgent(real),
    deskAgent(real),
    opsAgent(real),
    schedulerAgent(real),
    adminAgent(real),
    ...(options.extraAgents ?? []),
  ];
}

/** desk-log (an in-process sink) always; ops (a signed webhook) when ZMODU_OPS_WEBHOOK_URL and ZMODU_OPS_WEBHOOK_SECRET are set. */
function notificationChannels(env: NodeJS.ProcessEnv = process.env): Record<string, ChannelSpec> {
  const channels: Record<string, ChannelSpec> = { 'desk-log': { type: 'sink', handler: deskLogSink } };
  if (env.ZMODU_OPS_WEBHOOK_URL && env.ZMODU_OPS_WEBHOOK_SECRET)
    channels.ops = { type: 'webhook', url: env.ZMODU_OPS_WEBHOOK_URL, secret: env.ZMODU_OPS_WEBHOOK_SECRET };
  return channels;
}
