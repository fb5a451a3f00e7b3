import { Inject } from '@nestjs/common';

/**
 * Public token: the `OutboxStore` that OutboxService, OutboxRelay and command.execute use. Provide
 * your own through `OutboxModule.forRoot({ store })`; inject it with `@InjectOutboxStore()`.
 */
export const OUTBOX_STORE = Symbol('zmodu:OUTBOX_STORE');

/** Inject the outbox's store (the `OUTBOX_STORE` token). */
export const InjectOutboxStore = () => Inject(OUTBOX_STORE);

/** Internal: OutboxModule's options with their defaults, merged once (from the options given to forRoot/forRootAsync). */
export const OUTBOX_OPTIONS = Symbol('zmodu:OUTBOX_OPTIONS');
