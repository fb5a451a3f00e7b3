import { Injectable } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { Skill } from '@zmodu/skills';
import { AgentSpec } from '../../agent-definition';
import { AgentModule } from '../../agent.module';
import { AgentWorkerModule } from '../agent-worker.module';
import { ModelProvider, ModelRequest, ModelTurn } from '../../providers/model-provider';
import { AgentWorkerOptions } from '../agent-worker.options';

@Injectable()
export class WorkerSkills {
  @Skill({
    name: 'market.quote',
    action: 'read',
    description: 'Quote',
    parameters: { type: 'object', properties: { symbol: { type: 'string' } } },
  })
  quote(args: { symbol: string }) {
    return { symbol: args.symbol, price: 101.5 };
  }

  @Skill({ name: 'market.broken', action: 'read', description: 'Always throws', parameters: { type: 'object' } })
  broken(): never {
    throw new Error('the market feed is down');
  }
}

/** A model that answers `text` once `open()` was called, or fails its turn when the run is aborted. */
export class GatedModel implements ModelProvider {
  readonly name = 'gated';
  started = 0;
  /** Calls whose signal aborted while they waited at the gate. */
  aborted = 0;
  private gate!: Promise<void>;
  private release!: () => void;

  constructor(private readonly text = 'done') {
    this.close();
  }

  close(): void {
    this.gate = new Promise((r) => (this.release = r));
  }

  open(): void {
    this.release();
  }

  async complete(request: ModelRequest): Promise<ModelTurn> {
    this.started++;
    await new Promise<void>((resolve, reject) => {
      void this.gate.then(resolve);
      request.signal.addEventListener(
        'abort',
        () => {
          this.aborted++;
          reject(new Error('the model call was aborted'));
        },
        { once: true },
      );
    });
    return { text: this.text, toolCalls: [], usage: { inputTokens: 1, outputTokens: 1 } };
  }
}

export const spec = (provider: ModelProvider, over: Partial<AgentSpec> = {}): AgentSpec => ({
  name: 'trader',
  provider,
  skills: ['market.quote', 'market.broken'],
  guard: { allow: ['market.quote', 'market.broken'], allowExecute: false },
  ...over,
});

export async function compileWorkerApp(agents: AgentSpec[], worker: AgentWorkerOptions | undefined): Promise<TestingModule> {
  return Test.createTestingModule({
    imports: [
      AgentModule.forRoot({ agents, guard: { auditStore: 'memory', quotaStore: 'memory' } }),
      // No worker options: an app without AgentWorkerModule.
      ...(worker ? [AgentWorkerModule.forRoot(worker)] : []),
    ],
    providers: [WorkerSkills],
  }).compile();
}

export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export const SCOPE = { tenantId: 't1', userId: 'alice', permissions: ['market:read'] };
