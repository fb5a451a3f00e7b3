import { MCP_SKILL_TAKEN_MESSAGE } from '../agent.messages';
import { ZmoduError } from '@zmodu/core';

/** A tool of a required external MCP server maps to a skill name another skill already has. */
export class McpSkillNameTakenException extends ZmoduError {
  constructor(
    readonly server: string,
    readonly tool: string,
    readonly skill: string,
    readonly takenBy: string,
  ) {
    super(MCP_SKILL_TAKEN_MESSAGE(server, tool, skill, takenBy));
    this.name = 'McpSkillNameTakenException';
  }
}
