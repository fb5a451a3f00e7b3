/**
 * A child process for load-pg-boss.spec.ts: an application as it boots where pg-boss is not installed. A resolve hook
 * of Node's module loader (module.registerHooks, installed before anything of ours is loaded) answers every request for
 * pg-boss as Node does for a package that is not there, and prints `ASKED pg-boss` when one comes. argv[2] is the
 * queue driver of AgentModule ('pg-boss' or 'in-process'); the child prints `BOOTED`, or `FAILED <name>: <message>`.
 */
import * as nodeModule from 'node:module';

/** module.registerHooks (Node >= 22.15 and 23.5), typed here: the @types/node of the repository may predate it. */
type Resolve = (specifier: string, context: object, next: (specifier: string, context: object) => unknown) => unknown;
const { registerHooks } = nodeModule as unknown as { registerHooks: (hooks: { resolve: Resolve }) => void };

registerHooks({
  resolve(specifier, context, next) {
    if (specifier !== 'pg-boss' && !specifier.startsWith('pg-boss/')) return next(specifier, context);
    process.stdout.write('ASKED pg-boss\n');
    throw Object.assign(new Error(`Cannot find module '${specifier}'`), { code: 'MODULE_NOT_FOUND' });
  },
});

async function main(): Promise<void> {
  // Loaded after the hook, as an application's modules are: nothing of @zmodu/agent has asked for pg-boss before.
  await import('reflect-metadata');
  const { Module } = await import('@nestjs/common');
  const { NestFactory } = await import('@nestjs/core');
  const { AgentModule, AgentWorkerModule } = await import('@zmodu/agent');
  const driver = process.argv[2] as 'pg-boss' | 'in-process';
  @Module({
    imports: [
      AgentModule.forRoot({ agents: [], guard: { auditStore: 'memory', quotaStore: 'memory' } }),
      AgentWorkerModule.forRoot({ runStore: 'memory', queue: { driver, connectionString: 'postgres://nobody@127.0.0.1:1/none' } }),
    ],
  })
  class AppModule {}
  try {
    const app = await NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false });
    process.stdout.write('BOOTED\n');
    await app.close();
  } catch (err) {
    process.stdout.write(`FAILED ${(err as Error).name}: ${(err as Error).message}\n`);
  }
}

void main();
