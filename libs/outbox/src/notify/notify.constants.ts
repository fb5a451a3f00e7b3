/** Public: the outbox topic of webhook notifications (NotifyModule registers its relay handler). */
export const WEBHOOK_TOPIC = 'zmodu.notify.webhook';

/** Internal: NotifyModule's options with their defaults (merged once, from NOTIFY_MODULE_OPTIONS). */
export const NOTIFY_OPTIONS = Symbol('zmodu:NOTIFY_OPTIONS');
