/** Variables of the caller's shell that choose the sample's model: a spawned demo or server must not inherit them. */
export const MODEL_VARS = [
  'OPENAI_API_KEY',
  'OPENAI_BASE_URL',
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_BASE_URL',
  'ZMODU_MODEL',
  'ZMODU_MODEL_PROVIDER',
];
