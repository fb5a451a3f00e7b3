import { INVALID_MCP_SERVER_MESSAGE } from '../agent.messages';

/** An `mcpServers` entry of AgentModule options that cannot be used; the message names the field to fix. */
export class InvalidMcpServerOptionsException extends Error {
  constructor(index: number, name: unknown, problem: string) {
    super(INVALID_MCP_SERVER_MESSAGE(index, name, problem));
    this.name = 'InvalidMcpServerOptionsException';
  }
}
