// svc.v1.WebhookEndpointsService: the webhook endpoints of the caller's project and environment, their secrets,
// test events, and the deliveries made to them. Another project or environment never sees an endpoint: 404.
import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  CreateWebhookEndpointResponseSchema,
  DeleteWebhookEndpointResponseSchema,
  GetWebhookDeliveryResponseSchema,
  GetWebhookEndpointResponseSchema,
  ListWebhookDeliveriesResponseSchema,
  ListWebhookEndpointsResponseSchema,
  RecoverWebhookDeliveriesResponseSchema,
  ReplayWebhookDeliveryResponseSchema,
  RetryWebhookDeliveryResponseSchema,
  RotateWebhookEndpointSecretResponseSchema,
  TestWebhookEndpointResponseSchema,
  UpdateWebhookEndpointResponseSchema,
  WebhookEndpointSchema,
  type CreateWebhookEndpointResponse,
  type WebhookEndpointsService,
  type CreateWebhookEndpointRequest,
  type DeleteWebhookEndpointRequest,
  type GetWebhookDeliveryRequest,
  type GetWebhookEndpointRequest,
  type ListWebhookDeliveriesRequest,
  type ListWebhookEndpointsRequest,
  type RecoverWebhookDeliveriesRequest,
  type ReplayWebhookDeliveryRequest,
  type RetryWebhookDeliveryRequest,
  type RotateWebhookEndpointSecretRequest,
  type TestWebhookEndpointRequest,
  type UpdateWebhookEndpointRequest,
} from "../../gen/svc/v1/webhook_endpoints_pb.ts";
import type { Clock } from "../domain/clock.ts";
import { MAX_WEBHOOK_ENDPOINTS } from "../domain/limits.ts";
import { svcError, validationError } from "../domain/errors.ts";
import { newUuid } from "../domain/random.ts";
import {
  checkDescription,
  checkEventTypes,
  checkGracePeriodHours,
  checkRecoveryWindow,
  eventTypesOfCreation,
} from "../domain/webhook-endpoint-rules.ts";
import { generateWebhookSecret } from "../domain/webhook-signature.ts";
import { checkWebhookUrl } from "../domain/webhook-url.ts";
import { UniqueConflict } from "../store/unique-conflict.ts";
import { testEvent } from "../events/event-factory.ts";
import type { EventRepository } from "../store/event-repository.ts";
import { DELIVERY_STATUSES, type DeliveryStatus, type WebhookDeliveryRepository } from "../store/webhook-delivery-repository.ts";
import { newWebhookEndpoint, type WebhookEndpointDocument, type WebhookEndpointRepository } from "../store/webhook-endpoint-repository.ts";
import { assertResolvableHostAllowed } from "../webhooks/address-vetting.ts";
import { settleDeliveriesOfDisabledEndpoint } from "../webhooks/endpoint-disabling.ts";
import { sendSignedEvent, type SendSettings } from "../webhooks/signed-request.ts";
import { listParameters, listWindow } from "./pagination.ts";
import { reservationOf } from "../access/creation-reservation.ts";
import { tenantOf } from "../access/principal.ts";
import { reservedUuid } from "../domain/reserved-ids.ts";
import { deliveryMessage, endpointMessage, recoveryMessage, testMessage } from "../messages/webhook-messages.ts";
import type { DeliveryRecovery } from "../webhooks/delivery-recovery.ts";
import { timestampDate } from "@bufbuild/protobuf/wkt";

export interface WebhookEndpointsDependencies {
  endpoints: WebhookEndpointRepository;
  deliveries: WebhookDeliveryRepository;
  events: EventRepository;
  clock: Clock;
  /** How test events are sent (time-out, name resolution); the resolver also vets URLs at creation. */
  send: SendSettings;
  /** Runs a replayed delivery's first attempt now. */
  dispatch: (deliveryId: string) => Promise<void>;
  /** Restarts the failed deliveries of a window, paced. */
  recovery: DeliveryRecovery;
  /** Removes a deleted endpoint's deliveries (WebhookDelivery.removeDeliveriesOf). */
  removeDeliveriesOf: (endpointId: string) => Promise<void>;
}

type UpdatePath = "url" | "description" | "event_types" | "enabled";
const UPDATE_PATHS: readonly UpdatePath[] = ["url", "description", "event_types", "enabled"];

function throwConflict(error: unknown): never {
  if (error instanceof UniqueConflict) throw svcError("webhook_endpoint_exists");
  throw error;
}

export class WebhookEndpointsServiceImpl implements ServiceImpl<typeof WebhookEndpointsService> {
  constructor(private readonly deps: WebhookEndpointsDependencies) {}

  async createWebhookEndpoint(request: CreateWebhookEndpointRequest, context: HandlerContext) {
    const scope = tenantOf(context);
    if (request.url === "") throw validationError("url", "url is required.");
    // The deprecated repeated field is still read, for the clients that send it.
    const eventTypes = eventTypesOfCreation(request.eventTypeList?.values, request.eventTypes);
    const description = checkDescription(request.description ?? "");
    const url = await this.checkUrl(request.url, scope.livemode);
    const now = this.deps.clock();
    const reservation = reservationOf(context);
    const id = reservation ? reservedUuid(reservation.seed, "webhook_endpoint") : newUuid();
    if (reservation?.resumed) {
      // The first run of this request died after claiming its key: answer what it created, if it got that far.
      // Its client never saw the secret, so it is shown now.
      const earlier = await this.deps.endpoints.find(scope, id);
      if (earlier) return create(CreateWebhookEndpointResponseSchema, { webhookEndpoint: endpointMessage(earlier, now, { withSecret: true }) });
    }
    if ((await this.deps.endpoints.count(scope)) >= MAX_WEBHOOK_ENDPOINTS) throw svcError("webhook_endpoint_limit");
    const endpoint = newWebhookEndpoint({ id, scope, url, description, eventTypes, now });
    await this.deps.endpoints.insert(endpoint).catch(throwConflict);
    // Creations racing for the last places all passed the count above: the earliest MAX_WEBHOOK_ENDPOINTS in creation order
    // stay, and a later one is taken back (no transactions needed).
    if ((await this.deps.endpoints.countCreatedBefore(scope, endpoint)) >= MAX_WEBHOOK_ENDPOINTS) {
      await this.deps.endpoints.delete(scope, endpoint._id);
      throw svcError("webhook_endpoint_limit");
    }
    return create(CreateWebhookEndpointResponseSchema, { webhookEndpoint: endpointMessage(endpoint, now, { withSecret: true }) });
  }

  /**
   * A replayed creation shows the signing secret only while it still signs: after a rotation the endpoint is
   * answered as a retrieval shows it, and after a deletion without its secret.
   */
  async replayedCreation(response: CreateWebhookEndpointResponse, context: HandlerContext): Promise<CreateWebhookEndpointResponse> {
    const created = response.webhookEndpoint;
    if (!created) return response;
    const now = this.deps.clock();
    const current = await this.deps.endpoints.find(tenantOf(context), created.id);
    if (current?.secret === created.secret) return response;
    const webhookEndpoint = current ? endpointMessage(current, now) : create(WebhookEndpointSchema, { ...created, secret: undefined });
    return create(CreateWebhookEndpointResponseSchema, { webhookEndpoint });
  }

  async listWebhookEndpoints(request: ListWebhookEndpointsRequest, context: HandlerContext) {
    const scope = tenantOf(context);
    const window = await listWindow(listParameters(request), (id) => this.deps.endpoints.find(scope, id));
    const page = await this.deps.endpoints.list(scope, window);
    const now = this.deps.clock();
    return create(ListWebhookEndpointsResponseSchema, { data: page.items.map((e) => endpointMessage(e, now)), hasMore: page.hasMore });
  }

  async getWebhookEndpoint(request: GetWebhookEndpointRequest, context: HandlerContext) {
    const endpoint = await this.findEndpoint(context, request.id);
    return create(GetWebhookEndpointResponseSchema, { webhookEndpoint: endpointMessage(endpoint, this.deps.clock()) });
  }

  async updateWebhookEndpoint(request: UpdateWebhookEndpointRequest, context: HandlerContext) {
    const scope = tenantOf(context);
    const fields = request.endpoint;
    const paths = request.updateMask?.paths.length
      ? request.updateMask.paths
      : UPDATE_PATHS.filter((path) => (path === "event_types" ? (fields?.eventTypes.length ?? 0) > 0 : fieldValue(fields, path) !== undefined));
    const set: Partial<WebhookEndpointDocument> = {};
    for (const path of paths) {
      if (!UPDATE_PATHS.includes(path as UpdatePath)) throw validationError(path, `Unknown parameter: ${path}.`);
    }
    if (paths.includes("event_types")) set.event_types = checkEventTypes(fields?.eventTypes ?? []);
    if (paths.includes("description")) set.description = checkDescription(fields?.description ?? "");
    if (paths.includes("url")) {
      if (!fields?.url) throw validationError("url", "url must not be empty.");
      set.url = await this.checkUrl(fields.url, scope.livemode);
    }
    if (paths.includes("enabled") && fields?.enabled !== undefined) {
      // Re-enabling starts the count of failures afresh; disabling by hand says so.
      Object.assign(
        set,
        fields.enabled ? { enabled: true, disabled_reason: null, consecutive_failures: 0 } : { enabled: false, disabled_reason: "manual" },
      );
    }
    const now = this.deps.clock();
    let endpoint = await this.findEndpoint(context, request.id);
    if (Object.keys(set).length > 0) {
      endpoint =
        (await this.deps.endpoints.update(scope, endpoint._id, { $set: { ...set, updated_at: now } }).catch(throwConflict)) ?? this.notFound();
      if (set.enabled === false) await settleDeliveriesOfDisabledEndpoint(this.deps.deliveries, endpoint._id, now);
    }
    return create(UpdateWebhookEndpointResponseSchema, { webhookEndpoint: endpointMessage(endpoint, now) });
  }

  async deleteWebhookEndpoint(request: DeleteWebhookEndpointRequest, context: HandlerContext) {
    const scope = tenantOf(context);
    if (!(await this.deps.endpoints.delete(scope, request.id))) this.notFound();
    // The endpoint goes first: a worker that finds it gone drops its attempt, and no fan-out adds a delivery. A
    // delivery's job finds its record gone and ends, so removing the records leaves nothing due anywhere.
    await this.deps.removeDeliveriesOf(request.id);
    return create(DeleteWebhookEndpointResponseSchema, { id: request.id, deleted: true });
  }

  async rotateWebhookEndpointSecret(request: RotateWebhookEndpointSecretRequest, context: HandlerContext) {
    const scope = tenantOf(context);
    const graceHours = checkGracePeriodHours(request.gracePeriodHours);
    const current = await this.findEndpoint(context, request.id);
    const now = this.deps.clock();
    // Only the secret being replaced keeps signing: rotating again drops the oldest.
    const endpoint = await this.deps.endpoints.update(scope, current._id, {
      $set: {
        secret: generateWebhookSecret(),
        previous_secret: graceHours > 0 ? current.secret : null,
        previous_secret_expires_at: graceHours > 0 ? new Date(now.getTime() + graceHours * 3_600_000) : null,
        updated_at: now,
      },
    });
    return create(RotateWebhookEndpointSecretResponseSchema, {
      webhookEndpoint: endpointMessage(endpoint ?? this.notFound(), now, { withSecret: true }),
    });
  }

  async testWebhookEndpoint(request: TestWebhookEndpointRequest, context: HandlerContext) {
    const endpoint = await this.findEndpoint(context, request.id);
    const event = testEvent(endpoint, this.deps.clock());
    await this.deps.events.insertOnce(event);
    // Sent to enabled and disabled endpoints alike, never retried, never counted toward disabling.
    const result = await sendSignedEvent(endpoint, event, 1, this.deps.send);
    return create(TestWebhookEndpointResponseSchema, { webhookTest: testMessage(endpoint._id, event._id, result) });
  }

  async listWebhookDeliveries(request: ListWebhookDeliveriesRequest, context: HandlerContext) {
    const parameters = listParameters(request);
    if (request.status !== undefined && !DELIVERY_STATUSES.includes(request.status as DeliveryStatus)) {
      throw validationError("status", `status must be one of ${DELIVERY_STATUSES.join(", ")}.`);
    }
    const endpoint = await this.findEndpoint(context, request.endpointId);
    const window = await listWindow(parameters, (id) => this.deps.deliveries.find(endpoint._id, id));
    const page = await this.deps.deliveries.list(endpoint._id, {
      ...window,
      ...(request.status !== undefined ? { status: request.status as DeliveryStatus } : {}),
    });
    return create(ListWebhookDeliveriesResponseSchema, { data: page.items.map(deliveryMessage), hasMore: page.hasMore });
  }

  async getWebhookDelivery(request: GetWebhookDeliveryRequest, context: HandlerContext) {
    const { delivery } = await this.findDelivery(context, request.endpointId, request.id);
    return create(GetWebhookDeliveryResponseSchema, { webhookDelivery: deliveryMessage(delivery) });
  }

  async replayWebhookDelivery(request: ReplayWebhookDeliveryRequest, context: HandlerContext) {
    const { endpoint, delivery } = await this.findDelivery(context, request.endpointId, request.id);
    if (!endpoint.enabled) throw svcError("endpoint_disabled");
    // Only a settled delivery starts a new cycle; the conditional update settles races between two replays.
    const replayed = delivery.status === "pending" ? null : await this.deps.deliveries.replay(endpoint._id, delivery._id, this.deps.clock());
    if (!replayed) throw svcError("delivery_in_progress");
    await this.deps.dispatch(replayed._id);
    return create(ReplayWebhookDeliveryResponseSchema, { webhookDelivery: deliveryMessage(replayed) });
  }

  /**
   * Runs a pending delivery's next attempt now: its job is moved to now, so whichever process takes jobs runs it at
   * once; the attempt is numbered and counted as it would have been on schedule. An attempt in flight is
   * `delivery_in_progress`; a settled delivery is `invalid_state` (replay starts it again).
   */
  async retryWebhookDelivery(request: RetryWebhookDeliveryRequest, context: HandlerContext) {
    const { endpoint, delivery } = await this.findDelivery(context, request.endpointId, request.id);
    if (!endpoint.enabled) throw svcError("endpoint_disabled");
    if (delivery.status !== "pending") {
      throw svcError("invalid_state", `The delivery is ${delivery.status}: only a pending delivery can be retried now; replay a settled one.`);
    }
    const now = this.deps.clock();
    if (delivery.lease_until && delivery.lease_until > now) throw svcError("delivery_in_progress");
    await this.deps.dispatch(delivery._id);
    return create(RetryWebhookDeliveryResponseSchema, { webhookDelivery: deliveryMessage({ ...delivery, next_attempt_at: now }) });
  }

  async recoverWebhookDeliveries(request: RecoverWebhookDeliveriesRequest, context: HandlerContext) {
    const window = checkRecoveryWindow(
      request.since ? timestampDate(request.since) : undefined,
      request.until ? timestampDate(request.until) : undefined,
      this.deps.clock(),
    );
    const endpoint = await this.findEndpoint(context, request.id);
    if (!endpoint.enabled) throw svcError("endpoint_disabled", "The webhook endpoint is disabled; re-enable it before recovering its deliveries.");
    const queued = await this.deps.recovery.recover(endpoint._id, window);
    return create(RecoverWebhookDeliveriesResponseSchema, { webhookRecovery: recoveryMessage(endpoint._id, window, queued) });
  }

  /** The static URL rules, then the resolved addresses when the name resolves now. Answers the normalised URL. */
  private async checkUrl(raw: string, livemode: boolean): Promise<string> {
    const { refusedLoopbackPorts } = this.deps.send;
    const checked = checkWebhookUrl(raw, { livemode, ...(refusedLoopbackPorts ? { refusedLoopbackPorts } : {}) });
    await assertResolvableHostAllowed(checked, { livemode, ...(this.deps.send.lookup ? { lookup: this.deps.send.lookup } : {}) });
    return checked.url;
  }

  /** Unknown, or of another project or environment: the same 404. */
  private async findEndpoint(context: HandlerContext, id: string): Promise<WebhookEndpointDocument> {
    return (await this.deps.endpoints.find(tenantOf(context), id)) ?? this.notFound();
  }

  /** A delivery of an endpoint the caller may see: 404 for the endpoint first, then for the delivery. */
  private async findDelivery(context: HandlerContext, endpointId: string, id: string) {
    const endpoint = await this.findEndpoint(context, endpointId);
    const delivery = await this.deps.deliveries.find(endpoint._id, id);
    if (!delivery) throw svcError("webhook_delivery_not_found");
    return { endpoint, delivery };
  }

  private notFound(): never {
    throw svcError("webhook_endpoint_not_found");
  }
}

function fieldValue(fields: UpdateWebhookEndpointRequest["endpoint"], path: Exclude<UpdatePath, "event_types">): unknown {
  if (!fields) return undefined;
  return path === "url" ? fields.url : path === "description" ? fields.description : fields.enabled;
}
