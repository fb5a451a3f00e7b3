export * from './audit-log-store.contract';
export * from './token-quota-store.contract';
