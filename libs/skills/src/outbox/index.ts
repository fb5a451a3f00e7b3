export * from './outbox.types';
export * from './outbox.service';
export * from './outbox-relay';
export * from './outbox.module';
export * from './outbox.migration';
