// REST answers of svc.v1.WebhookEndpointsService.
import type {
  CreateWebhookEndpointResponse,
  DeleteWebhookEndpointResponse,
  GetWebhookDeliveryResponse,
  GetWebhookEndpointResponse,
  ListWebhookDeliveriesResponse,
  ListWebhookEndpointsResponse,
  ReplayWebhookDeliveryResponse,
  RotateWebhookEndpointSecretResponse,
  TestWebhookEndpointResponse,
  UpdateWebhookEndpointResponse,
} from "../../../gen/svc/v1/webhook_endpoints_pb.ts";
import { jsonList } from "../../representations/json-values.ts";
import {
  deletedWebhookEndpointJson,
  webhookDeliveryJson,
  webhookEndpointJson,
  webhookTestJson,
} from "../../representations/webhooks.ts";
import type { ResponderTable } from "../responders.ts";

const SERVICE = "svc.v1.WebhookEndpointsService";

export const webhookResponders: ResponderTable = {
  [`${SERVICE}.CreateWebhookEndpoint`]: (r: CreateWebhookEndpointResponse) => ({ status: 201, body: webhookEndpointJson(r.webhookEndpoint!) }),
  [`${SERVICE}.ListWebhookEndpoints`]: (r: ListWebhookEndpointsResponse, path) => ({
    status: 200,
    body: jsonList(path, r.data.map(webhookEndpointJson), r.hasMore),
  }),
  [`${SERVICE}.GetWebhookEndpoint`]: (r: GetWebhookEndpointResponse) => ({ status: 200, body: webhookEndpointJson(r.webhookEndpoint!) }),
  [`${SERVICE}.UpdateWebhookEndpoint`]: (r: UpdateWebhookEndpointResponse) => ({ status: 200, body: webhookEndpointJson(r.webhookEndpoint!) }),
  [`${SERVICE}.DeleteWebhookEndpoint`]: (r: DeleteWebhookEndpointResponse) => ({ status: 200, body: deletedWebhookEndpointJson(r.id) }),
  [`${SERVICE}.RotateWebhookEndpointSecret`]: (r: RotateWebhookEndpointSecretResponse) => ({
    status: 200,
    body: webhookEndpointJson(r.webhookEndpoint!),
  }),
  [`${SERVICE}.TestWebhookEndpoint`]: (r: TestWebhookEndpointResponse) => ({ status: 200, body: webhookTestJson(r.webhookTest!) }),
  [`${SERVICE}.ListWebhookDeliveries`]: (r: ListWebhookDeliveriesResponse, path) => ({
    status: 200,
    body: jsonList(path, r.data.map(webhookDeliveryJson), r.hasMore),
  }),
  [`${SERVICE}.GetWebhookDelivery`]: (r: GetWebhookDeliveryResponse) => ({ status: 200, body: webhookDeliveryJson(r.webhookDelivery!) }),
  [`${SERVICE}.ReplayWebhookDelivery`]: (r: ReplayWebhookDeliveryResponse) => ({ status: 200, body: webhookDeliveryJson(r.webhookDelivery!) }),
};
