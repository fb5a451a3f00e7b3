import { INVALID_MCP_SERVER_MESSAGE } from '../agent.messages';
import { ZmoduError } from '@zmodu/core';

/** An `mcpServers` entry of AgentModule options that cannot be used; the message names the field to fix. */
export class InvalidMcpServerOptionsException extends ZmoduError {
  constructor(index: number, name: unknown, problem: string) {
    super(INVALID_MCP_SERVER_MESSAGE(index, name, problem));
    this.name = 'InvalidMcpServerOptionsException';
  }
}
