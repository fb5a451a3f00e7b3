import { InvalidPipelineOptionsException } from './exceptions/invalid-pipeline-options.exception';
import { DEFAULT_EXPIRY_MS, DEFAULT_STEPS, resolvePipelineOptions } from './pipeline.options';

describe('resolvePipelineOptions', () => {
  it('merges the defaults once; a field given as undefined keeps its default', () => {
    const resolved = resolvePipelineOptions({ actions: {}, recoveryIntervalMs: undefined, agent: 'desk', approval: { chains: {} } });
    expect(resolved).toMatchObject({ recoveryIntervalMs: 30_000, agent: 'desk', registerSkills: true, proposable: [], reviewers: [] });
    expect(resolved.approval).toEqual({ chains: {}, defaultSteps: DEFAULT_STEPS, expiresInMs: DEFAULT_EXPIRY_MS });
  });

  it('refuses executors and actions that are not an object, saying what to do', () => {
    expect(() => resolvePipelineOptions({ executors: {} } as never)).toThrow(InvalidPipelineOptionsException);
    expect(() => resolvePipelineOptions({ executors: {} } as never)).toThrow(/a staged action is a skill/);
    expect(() => resolvePipelineOptions({ actions: null } as never)).toThrow(/actions must be/);
  });
});
