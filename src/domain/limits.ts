// Limits of the public contract, stated once: the rules enforce these and the messages and documents quote them.

/** Largest request body (JSON, Connect or gRPC message) accepted, read no further. */
export const MAX_BODY_BYTES = 64 * 1024;

/** Webhook endpoints per project and environment. */
export const MAX_WEBHOOK_ENDPOINTS = 20;
