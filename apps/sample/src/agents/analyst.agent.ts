import { AgentSpec, lastObservation, ModelProvider, ScriptedModelProvider } from '@zmodu/agent';

/** A read-only analyst: a healthy policy (read skills only), which reads the desk's orders with db.query. */
export function analystAgent(provider?: ModelProvider): AgentSpec {
  return {
    name: 'analyst',
    provider: provider ?? scriptedAnalyst(),
    skills: ['market.quote', 'db.query', 'entity.list'],
    guard: { allow: ['market.quote', 'db.query', 'entity.list'], allowExecute: false },
    systemPrompt:
      'You are a read-only market analyst. You may quote and query the desk data (db.query: one SELECT over sample_orders ' +
      'and sample_instruments). Answer in a few sentences.',
    maxSteps: 4,
  };
}

function scriptedAnalyst(): ModelProvider {
  return new ScriptedModelProvider([
    {
      text: 'Quoting ACME and counting the desk orders by status.',
      toolCalls: [
        { name: 'market.quote', arguments: { symbol: 'ACME' } },
        {
          name: 'db.query',
          arguments: {
            sql: 'SELECT status, count(*) AS orders, sum(qty) AS quantity FROM sample_orders GROUP BY status ORDER BY status',
          },
        },
      ],
    },
    (req) => {
      const obs = lastObservation(req) as { rows?: unknown[]; error?: string; reason?: string };
      return {
        text: obs?.rows
          ? `Orders by status: ${JSON.stringify(obs.rows)}`
          : `Could not read the desk orders: ${obs?.reason ?? obs?.error ?? 'no answer'}.`,
      };
    },
  ]);
}
