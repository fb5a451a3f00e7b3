export * from './admin.options';
export * from './admin.module';
export * from './approvals.controller';
export * from './outbox.controller';
