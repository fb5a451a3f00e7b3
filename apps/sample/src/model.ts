import { AnthropicModelProvider, ModelProvider, OpenAIModelProvider } from '@zmodu/agent';
import { ConfigError } from './config-error';

export const DEFAULT_OPENAI_MODEL = 'gpt-4o-mini';
export const DEFAULT_ANTHROPIC_MODEL = 'claude-sonnet-4-5';
const KINDS = ['openai', 'anthropic', 'scripted'] as const;
type ModelKind = (typeof KINDS)[number];

/** The model the sample's agents run on. */
export interface SampleModel {
  readonly kind: ModelKind;
  /** The provider every agent uses; absent: each agent's own scripted model (offline). */
  readonly provider?: ModelProvider;
  /** What runs, for the first line of the demo and the server's log: provider, model and base URL, never a key. */
  readonly description: string;
}

/**
 * The model from the environment. ZMODU_MODEL_PROVIDER (openai, anthropic or scripted) chooses; unset, a key does:
 * OPENAI_API_KEY (first) or ANTHROPIC_API_KEY, else the scripted model. ZMODU_MODEL names the model (default
 * gpt-4o-mini, or claude-sonnet-4-5); OPENAI_BASE_URL / ANTHROPIC_BASE_URL point at another server of that protocol
 * (Ollama, vLLM, llama.cpp's server, LM Studio, a proxy). A setting that cannot work is a ConfigError saying what to set.
 */
export function modelFromEnv(env: NodeJS.ProcessEnv = process.env): SampleModel {
  const read = (name: string) => (env[name] ?? '').trim() || undefined;
  const chosen = read('ZMODU_MODEL_PROVIDER')?.toLowerCase();
  if (chosen !== undefined && !(KINDS as readonly string[]).includes(chosen))
    throw new ConfigError(`ZMODU_MODEL_PROVIDER must be one of ${KINDS.join(', ')} (got "${chosen}").`);
  const kind: ModelKind =
    (chosen as ModelKind | undefined) ?? (read('OPENAI_API_KEY') ? 'openai' : read('ANTHROPIC_API_KEY') ? 'anthropic' : 'scripted');
  const model = read('ZMODU_MODEL');
  if (model !== undefined && !/^[^\s\p{Cc}]{1,200}$/u.test(model))
    throw new ConfigError(`ZMODU_MODEL must be a model name of 1-200 characters without spaces or control characters (got "${model}").`);

  if (kind === 'scripted') {
    // A variable meant for a real model, with nothing to use it: say so rather than quietly play the script.
    const stray = chosen === undefined ? ['ZMODU_MODEL', 'OPENAI_BASE_URL', 'ANTHROPIC_BASE_URL'].find((n) => read(n)) : undefined;
    if (stray)
      throw new ConfigError(
        `${stray} is set but no model key is: set OPENAI_API_KEY (any non-empty value for a local server such as Ollama) or ANTHROPIC_API_KEY, or ZMODU_MODEL_PROVIDER=scripted to stay offline.`,
      );
    return { kind, description: 'model: scripted (offline; set OPENAI_API_KEY or ANTHROPIC_API_KEY to run on a real model)' };
  }

  const vars =
    kind === 'openai' ? { key: 'OPENAI_API_KEY', url: 'OPENAI_BASE_URL' } : { key: 'ANTHROPIC_API_KEY', url: 'ANTHROPIC_BASE_URL' };
  const apiKey = read(vars.key);
  if (!apiKey)
    throw new ConfigError(
      `ZMODU_MODEL_PROVIDER=${kind} needs ${vars.key}${kind === 'openai' ? ' (a local server such as Ollama or vLLM takes any non-empty key, e.g. OPENAI_API_KEY=local)' : ''}.`,
    );
  const baseURL = read(vars.url);
  if (baseURL !== undefined && !isHttpUrl(baseURL))
    throw new ConfigError(`${vars.url} must be an http(s) URL such as http://127.0.0.1:11434/v1 (got "${baseURL}").`);
  const name = model ?? (kind === 'openai' ? DEFAULT_OPENAI_MODEL : DEFAULT_ANTHROPIC_MODEL);
  const options = { model: name, apiKey, baseURL };
  const provider = kind === 'openai' ? new OpenAIModelProvider(options) : new AnthropicModelProvider(options);
  const where = baseURL ?? (kind === 'openai' ? 'https://api.openai.com/v1' : 'https://api.anthropic.com');
  const label = kind === 'openai' ? 'OpenAI-compatible (Chat Completions)' : 'Anthropic (Messages)';
  return {
    kind,
    provider,
    description: `model: ${label} "${name}"${model ? '' : ' (the default; set ZMODU_MODEL)'} at ${where}`,
  };
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
