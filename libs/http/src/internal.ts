// @zmodu/http/internal: what the other @zmodu packages (and this repository's tests) need from @zmodu/http and an
// application must not use. ESLint admits it only from libs/, apps/cli, test/ and bench/; it is not covered by semantic versioning.
export { httpAnswer } from './errors/http-answer';
export { InvalidHttpOptionsException } from './exceptions/invalid-http-options.exception';
export { CallerContextMissingException } from './exceptions/caller-context-missing.exception';
