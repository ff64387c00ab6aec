// Examples of the OpenAPI document: a realistic value for every named schema that does not state its own (the
// document gives it as the schema's `examples`; the money schemas state theirs), and the answers of operations that
// end in a particular state (a canceled session, a replayed delivery), which their entries name as `success.example`.
// An operation without its own example shows its schema's first one. test/rest/openapi-document.spec.ts validates
// every example against its schema.

const USER_ID = "104729361";
const CREATED_AT = "2026-11-20T09:14:03.512Z";
const UPDATED_AT = "2026-11-20T09:15:41.208Z";
const ENDPOINT_ID = "3f0c1c7e-5b8a-4d2e-9f61-2a7d9c4b8e10";
const EVENT_ID = "evt_8d3b2f0e-61c4-4a7e-9b15-0c2f6e4d7a91";
const KYC_SESSION_ID = "kyc_7Gm2QpXw9LrT4vNc8KbZ1sYd";
const WALLET_ID = "wal_9KcT3nVb7QmX2rLw5ZpD8sHf";

const user = {
  id: USER_ID,
  object: "user",
  phone: "+14155550123",
  external_id: "cust_4821",
  verified: true,
  kyc_status: "approved",
  suspended: false,
  livemode: false,
  wallet_status: "ready",
  created_at: CREATED_AT,
  last_login_at: null,
};

const termsAcceptance = { version: "2026-09", accepted_at: "2026-11-20T09:13:58.000Z" };

const profile = {
  object: "profile",
  email: "ada.lovelace@example.com",
  first_name: "Ada",
  last_name: "Lovelace",
  birth_date: "1990-12-10",
  country: "GB",
  referral_code: "FRIEND-2026",
  terms_acceptance: termsAcceptance,
  tagname: "ada.l",
  updated_at: UPDATED_AT,
};

const balance = { available_usd: 120.5, pending_in_usd: 25, pending_out_usd: 0 };

const wallet = {
  id: WALLET_ID,
  object: "wallet",
  user_id: USER_ID,
  status: "ready",
  simulated: true,
  currency: "usd",
  balance,
  livemode: false,
  created_at: CREATED_AT,
  updated_at: UPDATED_AT,
};

const signupModule = { enabled: true, required: true };

const phoneVerification = {
  object: "phone_verification",
  user_id: USER_ID,
  phone: "+14155550123",
  channel: "sms",
  status: "pending",
  attempts_remaining: 5,
  expires_at: "2026-11-20T09:25:41.208Z",
  resend_available_at: "2026-11-20T09:16:11.208Z",
  sends_remaining: 4,
  livemode: false,
  created_at: UPDATED_AT,
  updated_at: UPDATED_AT,
};

const kycSession = {
  id: KYC_SESSION_ID,
  object: "kyc_session",
  user_id: USER_ID,
  status: "requires_input",
  url: `https://kyc.example.com/sessions/${KYC_SESSION_ID}`,
  return_url: "https://app.example.com/kyc/done",
  expires_at: "2026-11-21T09:14:03.512Z",
  last_error: null,
  livemode: false,
  created_at: CREATED_AT,
  updated_at: CREATED_AT,
};

const event = { id: EVENT_ID, object: "event", type: "user.created", created_at: CREATED_AT, livemode: false, data: { object: user } };

const endpoint = {
  id: ENDPOINT_ID,
  object: "webhook_endpoint",
  url: "https://hooks.example.com/svc",
  description: "Production order service",
  event_types: ["user.created", "kyc.approved", "transaction.completed"],
  enabled: true,
  disabled_reason: null,
  secret_last4: "x7Qa",
  previous_secret_expires_at: null,
  livemode: false,
  created_at: CREATED_AT,
  updated_at: CREATED_AT,
};
const SECRET = "whsec_3kT9vLm2QxW7pRz4NcB8sYd1Hf6Gx7Qa";

const deliveryAttempt = {
  attempted_at: "2026-11-20T09:14:04.020Z",
  response_status: 200,
  error: null,
  duration_ms: 143,
  request: {
    url: "https://example.com/webhooks",
    headers: {
      "Svc-Signature": "t=1795684444,v1=5f2b8c0d6a1e4f3b9c7d2e8a1b0c4d6e8f1a3b5c7d9e0f2a4b6c8d0e1f3a5b7c",
      "Svc-Event-Id": EVENT_ID,
      "Svc-Event-Type": "user.created",
      "Svc-Delivery-Attempt": "1",
      "User-Agent": "Svc-Webhooks/1.0",
      Host: "example.com",
      "Content-Type": "application/json",
      "Content-Length": "312",
    },
    body: JSON.stringify({ id: EVENT_ID, object: "event", type: "user.created" }),
    body_truncated: false,
  },
  response: { headers: { "content-type": "text/plain", "content-length": "2" }, body: "ok", body_truncated: false },
};

const delivery = {
  id: "whd_6TnR2wXc9LmQ4bVz7KpS1dJf",
  object: "webhook_delivery",
  endpoint_id: ENDPOINT_ID,
  event_id: EVENT_ID,
  event_type: "user.created",
  status: "succeeded",
  attempt_count: 1,
  next_attempt_at: null,
  last_attempt: deliveryAttempt,
  attempts: [deliveryAttempt],
  created_at: CREATED_AT,
  updated_at: "2026-11-20T09:14:04.163Z",
};

const requestLog = {
  id: "req_3kT9vLm2QxW7pRz4NcB8sYd1",
  object: "request_log",
  method: "GET",
  path: "/v1/users/999999999",
  route: "/v1/users/{id}",
  status: 404,
  error_code: "user_not_found",
  idempotency_key: null,
  idempotent_replayed: false,
  api_key_id: "key_5Rt8Wq2Zx7Cv4Bn1Mk9Lp3Hd",
  source: "rest",
  duration_ms: 3,
  livemode: false,
  created_at: CREATED_AT,
};

const list = (path: string, data: unknown[]) => ({ object: "list", url: path, data, has_more: false });

/** One example per component schema, by schema name. */
export const SCHEMA_EXAMPLES: Record<string, unknown> = {
  EmptyBody: {},
  User: user,
  UserWithProfile: { ...user, profile },
  Profile: profile,
  TermsAcceptance: termsAcceptance,
  Wallet: wallet,
  WalletList: list(`/v1/users/${USER_ID}/wallets`, [wallet]),
  UserList: list("/v1/users", [user]),
  SignupModule: signupModule,
  SignupConfig: {
    object: "signup_config",
    published: true,
    modules: {
      email: signupModule,
      first_name: signupModule,
      last_name: signupModule,
      birth_date: signupModule,
      country: signupModule,
      referral_code: { enabled: true, required: false },
      terms_acceptance: signupModule,
      tagname: { enabled: false, required: false },
    },
    min_age: 18,
    allowed_countries: ["GB", "US", "FR"],
    updated_at: "2026-11-02T16:00:00.000Z",
  },
  CreateUserRequest: {
    phone: "+14155550123",
    external_id: "cust_4821",
    email: "ada.lovelace@example.com",
    first_name: "Ada",
    last_name: "Lovelace",
    birth_date: "1990-12-10",
    country: "gb",
    terms_acceptance: termsAcceptance,
  },
  UpdateUserRequest: { email: "ada@example.org", tagname: "ada.l", referral_code: null },
  PhoneVerification: phoneVerification,
  StartPhoneVerificationRequest: { channel: "sms" },
  CheckPhoneVerificationRequest: { code: "000000" },
  KycSession: kycSession,
  KycSessionList: list(`/v1/users/${USER_ID}/kyc-sessions`, [kycSession]),
  CreateKycSessionRequest: { return_url: "https://app.example.com/kyc/done" },
  RejectKycSessionRequest: { reason: "Document expired" },
  Event: event,
  EventList: list("/v1/events", [event]),
  RequestLog: requestLog,
  RequestLogList: list("/v1/request-logs", [requestLog]),
  WebhookEvent: { ...event, created: CREATED_AT, project_id: "5b1e7c2a-9d44-4f3b-8a6e-2c0f1d9e7b35" },
  Kyc: { object: "kyc", user_id: USER_ID, status: "approved", livemode: false },
  WebhookEndpoint: endpoint,
  WebhookEndpointWithSecret: {
    ...endpoint,
    secret: "whsec_Z8pK2mQ7vR4xT9nL1cW6bY3dF5gH0jS2",
    secret_last4: "0jS2",
    previous_secret_expires_at: "2026-11-21T10:00:00.000Z",
    updated_at: "2026-11-20T10:00:00.000Z",
  },
  CreatedWebhookEndpoint: { ...endpoint, secret: SECRET },
  WebhookEndpointList: list("/v1/webhook-endpoints", [endpoint]),
  DeletedWebhookEndpoint: { id: ENDPOINT_ID, object: "webhook_endpoint", deleted: true },
  WebhookTest: {
    object: "webhook_test",
    endpoint_id: ENDPOINT_ID,
    event_id: "evt_2c7a9e14-3b6d-4f08-a1d5-7e9c0b4f2a63",
    status: "succeeded",
    response_status: 200,
    duration_ms: 187,
    error: null,
    timings: { dns_ms: 4, connect_ms: 21, tls_ms: 48, first_byte_ms: 112 },
    error_detail: null,
  },
  WebhookDeliveryAttempt: deliveryAttempt,
  WebhookAttemptRequest: deliveryAttempt.request,
  WebhookAttemptResponse: deliveryAttempt.response,
  WebhookDelivery: delivery,
  WebhookDeliveryList: list(`/v1/webhook-endpoints/${ENDPOINT_ID}/deliveries`, [delivery]),
  CreateWebhookEndpointRequest: {
    url: "https://hooks.example.com/svc",
    event_types: ["user.created", "kyc.approved", "transaction.completed"],
    description: "Production order service",
  },
  UpdateWebhookEndpointRequest: { enabled: true, event_types: ["*"] },
  WebhookRecovery: {
    object: "webhook_recovery",
    endpoint_id: ENDPOINT_ID,
    since: "2026-11-20T00:00:00.000Z",
    until: "2026-11-22T08:40:00.000Z",
    deliveries_queued: 100,
  },
  RecoverWebhookDeliveriesRequest: { since: "2026-11-20T00:00:00.000Z" },
  RotateWebhookEndpointSecretRequest: { grace_period_hours: 24 },
  Error: {
    error: {
      type: "invalid_request_error",
      code: "validation_error",
      message: "phone must be an E.164 number: '+' then 7 to 15 digits, the first not 0.",
      param: "phone",
      request_id: "req_8fK2nQ7xVb3L",
    },
  },
};

/** Answers of operations that end in a particular state. */
export const STATE_EXAMPLES = {
  phoneVerificationApproved: { ...phoneVerification, status: "approved" },
  kycSessionCanceled: { ...kycSession, status: "canceled", updated_at: UPDATED_AT },
  kycSessionProcessing: { ...kycSession, status: "processing", updated_at: UPDATED_AT },
  kycSessionApproved: { ...kycSession, status: "approved", updated_at: UPDATED_AT },
  kycSessionRejected: {
    ...kycSession,
    status: "rejected",
    last_error: { code: "verification_rejected", reason: "Document expired" },
    updated_at: UPDATED_AT,
  },
  webhookEndpointUpdated: { ...endpoint, event_types: ["*"], updated_at: UPDATED_AT },
  webhookDeliveryReplayed: { ...delivery, status: "pending", attempt_count: 0, next_attempt_at: UPDATED_AT, updated_at: UPDATED_AT },
  webhookDeliveryRetried: { ...delivery, status: "pending", next_attempt_at: UPDATED_AT },
};
