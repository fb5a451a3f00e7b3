export * from './proposal-store.contract';
