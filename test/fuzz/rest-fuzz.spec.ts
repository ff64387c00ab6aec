// A few thousand generated requests against every REST route: random and mutated JSON bodies, wrong types,
// huge and unicode strings, NUL, control characters and lone surrogates, bodies that are not UTF-8, odd content
// types, odd headers, bad and very long paths, absolute-form request targets and bad idempotency keys. No answer may be a 5xx, every
// error must be the error envelope (the OpenAPI contract hook also checks each response against the
// document), and the service must stay up.
import net from "node:net";
import { expect } from "chai";
import { restRouteOf } from "../../src/api/rest-route-table.ts";
import { EventsService } from "../../gen/svc/v1/events_pb.ts";
import { UsersService } from "../../gen/svc/v1/users_pb.ts";
import { WebhookEndpointsService } from "../../gen/svc/v1/webhook_endpoints_pb.ts";
import { uniquePhone } from "../support/phones.ts";
import { seededRandom } from "../support/seeded-random.ts";
import { startTestService, type RestResponse, type TestService } from "../support/test-service.ts";

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 3000);

const FIELD_NAMES = [
  "phone",
  "external_id",
  "email",
  "first_name",
  "last_name",
  "birth_date",
  "country",
  "referral_code",
  "terms_acceptance",
  "tagname",
  "url",
  "event_types",
  "description",
  "enabled",
  "grace_period_hours",
  "version",
  "accepted_at",
  "limit",
  "starting_after",
  "__proto__",
  "constructor",
  "",
  "id",
  "object",
];

describe("fuzz: generated requests to every REST route", function () {
  this.timeout(240_000);
  let svc: TestService;
  before(async () => {
    svc = await startTestService({ env: { SVC_RATE_LIMIT: "1000000" } });
  });
  after(async () => {
    await svc.stop();
  });

  it(`answers ${REQUESTS} generated requests (seed ${SEED}) without a 5xx, each error in the envelope`, async () => {
    const random = seededRandom(SEED);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const int = (max: number) => Math.floor(random() * max);

    const user = await svc.request("POST", "/v1/users", { body: { phone: "+14155550999" } });
    const endpoint = await svc.request("POST", "/v1/webhook-endpoints", { body: { url: "https://hooks.example.com/fuzz" } });
    const ids = [
      user.body.id,
      endpoint.body?.id,
      "1",
      "0",
      "999999999",
      "1234567890",
      "abc",
      "%00",
      "..%2F..",
      "evt_x",
      "-1",
      "ñ",
      "%F0%9F%98%80",
      "a".repeat(101),
      "9".repeat(2500),
      "%FF%FE",
      "%E2%82",
      "%ED%A0%80",
    ];

    const strings = (): unknown =>
      pick([
        "",
        " ",
        "a",
        "x".repeat(300),
        "é".repeat(70),
        "😀".repeat(40),
        "\u0000",
        "\uFFFF",
        "<script>",
        "'; drop table users; --",
        "+14155550100",
        "2026-11-22T10:00:00Z",
        "1990-02-30",
        "https://example.com",
        "http://127.0.0.1:1/",
        "*",
        "user.created",
        "x".repeat(70_000 / 2),
        "\ud800",
        "a\udfffb",
        "\ud83d",
        "a\u0000b",
        "\u001b[31m",
        "line\nbreak\ttab",
        "\u007f",
      ]);
    const scalar = (): unknown => pick([strings(), int(1000) - 500, 1e308, -0, 0.5, true, false, null]);
    const value = (depth: number): unknown => {
      const kind = int(depth > 2 ? 3 : 5);
      if (kind < 3) return scalar();
      if (kind === 3) return Array.from({ length: int(12) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: int(5) }, () => [pick(FIELD_NAMES), value(depth + 1)]));
    };
    const validish = (): Record<string, unknown> => ({
      phone: uniquePhone(),
      ...(random() < 0.5 ? { email: pick(["a@b.co", "bad", "", null, 5]) } : {}),
      ...(random() < 0.3 ? { terms_acceptance: pick([{ version: "v1", accepted_at: "2026-01-01T00:00:00Z" }, { version: 1 }, "v1", null]) } : {}),
      ...(random() < 0.3 ? { url: pick(["https://hooks.example.com/a", "http://10.0.0.1/", "ftp://x", 42]) } : {}),
      ...(random() < 0.3 ? { event_types: pick([["*"], ["user.created"], [], ["nope"], "user.created", [1]]) } : {}),
    });
    // Bytes that are not UTF-8: a stray continuation byte, 0xFF, a cut sequence, an overlong "/", an encoded surrogate.
    const notUtf8 = (): Buffer =>
      Buffer.concat([
        Buffer.from(`{"phone":"+14155550123","first_name":"`),
        Buffer.from(pick([[0x80], [0xff], [0xe2, 0x82], [0xc0, 0xaf], [0xed, 0xa0, 0x80]])),
        Buffer.from('"}'),
      ]);
    const rawBody = (): string | Buffer | undefined =>
      pick([
        notUtf8(),
        Buffer.from([0xef, 0xbb, 0xbf, ...Buffer.from(JSON.stringify(validish()))]),
        JSON.stringify(value(0)),
        JSON.stringify(validish()),
        JSON.stringify({ ...validish(), [pick(FIELD_NAMES)]: value(1) }),
        "{",
        "[]",
        "null",
        "42",
        '"text"',
        '{"a":',
        "\u0000\u0001",
        "{}",
        "",
        undefined,
        JSON.stringify(validish()).replace(/"/, "'"),
      ]);
    const headers = (): Record<string, string> => {
      const h: Record<string, string> = {};
      if (random() < 0.3) h["idempotency-key"] = pick(["", " ", "k".repeat(256), "ok-key", "spaces in key", "ünicode", `k-${int(50)}`]);
      if (random() < 0.1) h["svc-version"] = pick(["2026-11-20", "2020-01-01", "", "latest"]);
      if (random() < 0.15) {
        h["content-type"] = pick([
          "text/plain",
          "application/xml",
          "application/json; charset=latin1",
          "multipart/form-data",
          "garbage",
          "",
          "*/*",
          "APPLICATION/JSON",
          "application/json;",
          "application/json; charset=utf-16",
          "text/json",
          "application/x-www-form-urlencoded",
        ]);
      }
      if (random() < 0.05) h.accept = "application/xml";
      return h;
    };
    const key = () => pick([svc.sandboxKey, svc.sandboxKey, svc.sandboxKey, svc.liveKey, null, "svc_test_short", "Basic abc", ""]);

    const routes = [UsersService, EventsService, WebhookEndpointsService].flatMap((service) =>
      service.methods.flatMap((method) => restRouteOf(service, method) ?? []),
    );
    const failures: string[] = [];
    const check = (label: string, response: RestResponse) => {
      if (response.status >= 500) failures.push(`${label} -> ${response.status} ${response.text.slice(0, 200)}`);
      // HTTP gives a HEAD answer no body: only its status and headers can be checked.
      else if (response.status >= 400 && label.split(" ")[1] !== "HEAD") {
        const error = response.body?.error;
        const ok =
          error &&
          typeof error.type === "string" &&
          typeof error.code === "string" &&
          typeof error.message === "string" &&
          error.request_id === response.headers.get("x-request-id");
        if (!ok) failures.push(`${label} -> ${response.status} not an envelope: ${response.text.slice(0, 200)}`);
      }
      if (!response.headers.get("x-request-id") || !response.headers.get("x-ratelimit-limit")) failures.push(`${label} -> missing headers`);
    };

    for (let i = 0; i < REQUESTS; i++) {
      const route = pick(routes);
      let path = route.pathTemplate.replace(/\{[a-z_]+\}/g, () => encodeURI(String(pick(ids))));
      if (random() < 0.05)
        path = pick([`${path}/`, path.toUpperCase(), path.replace("/v1", "/v2"), `${path}/extra`, path.replace(/\//g, "//"), `${path}%`]);
      if (route.httpMethod === "GET" && random() < 0.4) {
        path += `?${pick(["limit", "starting_after", "type", "status", "bogus", "limit[]"])}=${encodeURIComponent(String(pick([int(300) - 50, "abc", "", "user.created", "pending", "evt_nope"])))}`;
      }
      const method = random() < 0.05 ? pick(["PUT", "OPTIONS", "HEAD", "DELETE", "PATCH"]) : route.httpMethod;
      const body = method === "GET" || method === "HEAD" ? undefined : rawBody();
      const label = `#${i} ${method} ${path} ${body?.slice(0, 60) ?? ""}`;
      try {
        check(label, await svc.request(method, path, { key: key(), headers: headers(), ...(body !== undefined ? { rawBody: body } : {}) }));
      } catch (error) {
        failures.push(`${label} -> transport error ${String(error)}`);
      }
    }
    // Absolute-form request targets (GET http://host/v1/... HTTP/1.1), which fetch cannot send: the same checks on
    // the raw answer, and a list's url never names the host.
    const { hostname, port } = new URL(svc.baseUrl);
    for (let i = 0; i < REQUESTS / 20; i++) {
      const route = pick(routes);
      const path = route.pathTemplate.replace(/\{[a-z_]+\}/g, () => encodeURI(String(pick(ids))));
      const target = `${pick(["http", "https", "HTTP", "ftp"])}://${pick(["evil.example", "127.0.0.1:1", "[::1]", "a@b"])}${path}${random() < 0.3 ? "?limit=2" : ""}`;
      const body = route.httpMethod === "GET" ? "" : JSON.stringify(validish());
      const k = key();
      const head = [
        `${route.httpMethod} ${target} HTTP/1.1`,
        "Host: evil.example",
        "Connection: close",
        "Content-Type: application/json",
        `Content-Length: ${Buffer.byteLength(body)}`,
        ...(k ? [`Authorization: Bearer ${k}`] : []),
      ];
      const label = `#abs${i} ${route.httpMethod} ${target}`;
      try {
        const socket = net.connect(Number(port), hostname);
        socket.write(`${head.join("\r\n")}\r\n\r\n${body}`);
        const chunks: Buffer[] = [];
        for await (const chunk of socket) chunks.push(chunk as Buffer);
        const text = Buffer.concat(chunks).toString("utf8");
        const split = text.indexOf("\r\n\r\n");
        const status = Number(text.slice(9, 12));
        const requestId = /\r\nx-request-id: (\S+)/i.exec(text.slice(0, split))?.[1];
        let answer: any;
        try {
          answer = JSON.parse(text.slice(split + 4));
        } catch {
          answer = undefined;
        }
        if (!(status >= 200 && status < 500)) failures.push(`${label} -> ${status} ${text.slice(0, 200)}`);
        else if (status >= 400 && !(answer?.error?.code && answer.error.request_id === requestId))
          failures.push(`${label} -> ${status} not an envelope`);
        if (answer?.object === "list" && answer.url !== path) failures.push(`${label} -> list url ${answer.url}`);
      } catch (error) {
        failures.push(`${label} -> transport error ${String(error)}`);
      }
    }
    expect(failures.slice(0, 20), `${failures.length} bad answers`).to.deep.equal([]);
    const health = await fetch(`${svc.baseUrl}/healthz`);
    expect(health.status).to.equal(200);
  });
});
