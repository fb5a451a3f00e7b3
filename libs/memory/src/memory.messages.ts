export const INVALID_SCOPE_MESSAGE = (what: string) =>
  `Memory needs a tenant and a user: ${what}. Give both as non-empty strings (not whitespace, not '0'); memory is never shared across users.`;
export const INVALID_ENTRY_MESSAGE = (problem: string) => `Cannot remember this entry: ${problem}.`;
export const MEMORY_ERASED_MESSAGE = (tenantId: string, userId: string) =>
  `The memory of user ${JSON.stringify(userId)} in tenant ${JSON.stringify(tenantId)} was erased after this write started: the write is refused. Start a new write (beginWrite) if the user remembers again.`;
export const MEMORY_FULL_MESSAGE = (max: number) =>
  `This user's memory already holds ${max} note${max === 1 ? '' : 's'}, the most it keeps: nothing was remembered. Forget notes first (MemoryStore.forget or erase; in the sample, DELETE /memory), or raise maxNotesPerUser.`;
export const INVALID_QUERY_MESSAGE = (problem: string) => `Invalid memory query: ${problem}.`;
export const INVALID_OPTIONS_MESSAGE = (problem: string) => `Invalid MemoryModule options: ${problem}.`;
export const SCOPE_REQUIRED_SKILL_MESSAGE = (skill: string) =>
  `${skill} needs a tenant and a user in the call's context; this call has none, so there is no memory to use.`;
