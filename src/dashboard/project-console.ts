// The project console: what one secret API key's project and environment holds, one file per section. Every read
// and change goes through the public services (and AdminService for the sandbox's user suspension), as the API's do.
import type { ConsoleRouter } from "./console-router.ts";
import { registerEventsConsole } from "./events-console.ts";
import { registerKycConsole } from "./kyc-console.ts";
import { registerOverview } from "./overview-console.ts";
import { registerSandboxConsole } from "./sandbox-console.ts";
import { registerUsersConsole } from "./users-console.ts";
import { registerWebhooksConsole } from "./webhooks-console.ts";

export function registerProjectConsole(router: ConsoleRouter): void {
  registerOverview(router);
  registerUsersConsole(router);
  registerSandboxConsole(router);
  registerKycConsole(router);
  registerEventsConsole(router);
  registerWebhooksConsole(router);
}
