import { AgentSpec, lastObservation, ModelProvider, ScriptedModelProvider } from '@zmodu/agent';

/** The admin skills the admin agent may call: its allow list names each one (no admin skill is reachable otherwise). */
export const ADMIN_AGENT_SKILLS = ['admin.config.get', 'admin.config.set', 'admin.cache.invalidate'];

/**
 * Desk administration: reads (and, when asked, changes) the desk's config keys and invalidates cached quotes, through
 * admin skills named one by one on its allow list. The caller's token needs admin:config / admin:cache as well.
 */
export function adminAgent(provider?: ModelProvider): AgentSpec {
  return {
    name: 'admin',
    provider: provider ?? scriptedAdmin(),
    skills: ADMIN_AGENT_SKILLS,
    guard: { allow: ADMIN_AGENT_SKILLS, allowExecute: true },
    systemPrompt:
      'You administer the desk. Read config keys with admin.config.get (no key: list them); change one with admin.config.set, ' +
      'sending the expectedVersion you read. Invalidate cached quotes with admin.cache.invalidate (cache "quotes", exact keys).',
    maxSteps: 3,
  };
}

function scriptedAdmin(): ModelProvider {
  return new ScriptedModelProvider([
    { text: 'Reading the draft limit.', toolCalls: [{ name: 'admin.config.get', arguments: { key: 'orders.maxDraftQuantity' } }] },
    (req) => {
      const obs = lastObservation(req) as { value?: unknown; version?: number; error?: string; reason?: string };
      return obs?.error
        ? { text: `Could not read the draft limit: ${obs.reason ?? obs.error}.` }
        : { text: `The draft limit is ${String(obs?.value)} (version ${String(obs?.version)}).` };
    },
  ]);
}
