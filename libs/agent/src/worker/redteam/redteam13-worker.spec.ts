import { TestingModule } from '@nestjs/testing';
import { InvalidGoalException } from '../../exceptions/invalid-goal.exception';
import { ScriptedModelProvider } from '../../providers/scripted-model.provider';
import { ModelProvider } from '../../providers/model-provider';
import { compileWorkerApp, SCOPE, spec, until } from '../__fixtures__/worker-fixtures';
import { AgentWorker } from '../agent-worker';
import { AgentRunRecord } from '../worker.ports';

describe('red team 13: AgentWorker (memory run store)', () => {
  let app: TestingModule | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it("RT-W1 a goal for tenant or user '0' (or ' 0 ') is refused like an empty one", async () => {
    app = await compileWorkerApp([spec(new ScriptedModelProvider([{ text: 'x' }]))], { runStore: 'memory' });
    await app.init();
    const worker = app.get(AgentWorker);
    for (const scope of [
      { ...SCOPE, tenantId: '0' },
      { ...SCOPE, userId: '0' },
      { ...SCOPE, tenantId: ' 0 ' },
    ]) {
      const err = await worker.post('quote ACME', scope).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidGoalException);
    }
  });

  it('RT-W2 post without a scope object is a clear InvalidGoalException, not a TypeError', async () => {
    app = await compileWorkerApp([spec(new ScriptedModelProvider([{ text: 'x' }]))], { runStore: 'memory' });
    await app.init();
    const err = await app
      .get(AgentWorker)
      .post('quote ACME', undefined as never)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidGoalException);
  });

  it('RT-W3 an agent run rejecting with a non-Error, non-stringable value ends failed; the run is not wedged as running', async () => {
    const results: AgentRunRecord[] = [];
    // A model provider that rejects with an object String() cannot print: the run ends failed, and is not wedged.
    const unprintable: ModelProvider = {
      name: 'unprintable',
      complete: async () => {
        throw Object.create(null);
      },
    };
    const hostile = spec(unprintable);
    app = await compileWorkerApp([hostile], { runStore: 'memory', onResult: (r) => void results.push(r) });
    await app.init();
    const worker = app.get(AgentWorker);
    const { runId } = await worker.post('quote ACME', SCOPE);
    const settled = await until(() => results.length === 1, 'the failed result', 2000).then(
      () => 'finished',
      () => 'never finished',
    );
    const record = await worker.get(SCOPE.tenantId, runId);
    expect({ settled, status: record?.status, running: worker.stats().running }).toEqual({
      settled: 'finished',
      status: 'failed',
      running: 0,
    });
  });
});
