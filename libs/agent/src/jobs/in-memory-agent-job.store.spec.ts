import { agentJobStoreContract } from '../testing';
import { InMemoryAgentJobStore } from './in-memory-agent-job.store';

agentJobStoreContract('InMemoryAgentJobStore (contract)', async () => ({ store: new InMemoryAgentJobStore() }));
