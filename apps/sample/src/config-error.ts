/** A setting of the environment is missing or wrong: the message says what to set (main prints it without a stack). */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}
