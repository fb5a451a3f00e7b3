// @zmodu/mcp/internal: what the other @zmodu packages (and this repository's tests) need from @zmodu/mcp and an
// application must not use. ESLint admits it only from libs/, apps/cli, test/ and bench/; it is not covered by semantic versioning.
export { InvalidMcpOptionsException } from './exceptions/invalid-mcp-options.exception';
export { McpSdkMissingException } from './exceptions/mcp-sdk-missing.exception';
export { jsonRpcErrorBody } from './json-rpc-error';
