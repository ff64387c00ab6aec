// Which secrets of an endpoint sign its deliveries: one rule for the signer and for what the API shows, so a
// previous secret is never shown as in its grace period while no longer signing (or the reverse).

/** The secret fields of a webhook endpoint. */
export interface EndpointSecrets {
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
}

/** Whether the secret replaced by the last rotation still signs at `now` (its grace period has not ended). */
export function previousSecretInGrace(endpoint: EndpointSecrets, now: Date): boolean {
  return endpoint.previous_secret !== null && endpoint.previous_secret_expires_at !== null && endpoint.previous_secret_expires_at > now;
}

/** The secrets that sign at `now`: the current one, then the previous one while its grace period lasts. */
export function activeSecrets(endpoint: EndpointSecrets, now: Date): string[] {
  return previousSecretInGrace(endpoint, now) ? [endpoint.secret, endpoint.previous_secret!] : [endpoint.secret];
}
