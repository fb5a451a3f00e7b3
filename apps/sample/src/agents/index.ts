export { ADMIN_AGENT_SKILLS, adminAgent } from './admin.agent';
export { analystAgent } from './analyst.agent';
export { deskAgent } from './desk.agent';
export { juniorAgent } from './junior.agent';
export { opsAgent } from './ops.agent';
export { scriptedTrader, TRADER_BUDGET, traderAgent } from './trader.agent';
export { schedulerAgent } from './scheduler.agent';
