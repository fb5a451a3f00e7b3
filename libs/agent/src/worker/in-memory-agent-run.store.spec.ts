import { agentRunStoreContract } from '../testing';
import { InMemoryAgentRunStore } from './in-memory-agent-run.store';

agentRunStoreContract('InMemoryAgentRunStore (contract)', async () => ({ store: new InMemoryAgentRunStore() }));
