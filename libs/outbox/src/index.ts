export * from './outbox.types';
export * from './outbox.store';
export * from './outbox.service';
export * from './outbox-relay';
export * from './outbox.module';
export * from './outbox.migration';
export { TypeOrmOutboxStore } from './typeorm-outbox.store';
export { commandKey, commandArgsHash, canonicalJson } from './command-key';
export * from './notify';
