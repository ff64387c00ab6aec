// decodeRestRequest with the real route descriptions (PUBLIC_API): path and query parameters, `*` bodies and
// PATCH bodies, turned into request messages; every refusal is 422 `validation_error` naming the parameter.
import { expect } from "chai";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { AdminService } from "../../gen/svc/admin/v1/admin_pb.ts";
import { PUBLIC_API } from "../../src/api/public-api.ts";
import type { RestRoute } from "../../src/api/rest-route-table.ts";
import type { NullMeaning } from "../../src/api/method-description.ts";
import { decodeRestRequest, type RestInput } from "../../src/rest/request-decoder.ts";
import { expectValidationError } from "../support/errors.ts";

function described(localName: string) {
  const found = PUBLIC_API.find((m) => m.method.localName === localName);
  if (!found) throw new Error(`no public method ${localName}`);
  return found;
}

/** Decodes as the REST gateway does for this method: its route and what null means in its body. */
function decode(localName: string, input: Partial<RestInput>): any {
  const method = described(localName);
  return decodeRestRequest(method.route, { params: {}, query: {}, body: undefined, ...input }, method.nullMeaning);
}

function refuses(localName: string, input: Partial<RestInput>, param: string, message: string): void {
  expectValidationError(() => decode(localName, input), param, new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`));
}

describe("decodeRestRequest", () => {
  it("reads what null means from the method descriptions", () => {
    const meanings: Record<string, NullMeaning> = {};
    for (const m of PUBLIC_API) meanings[m.method.localName] = m.nullMeaning;
    expect(meanings.createUser).to.equal("absent");
    expect(meanings.updateUser).to.equal("clear");
    expect(meanings.updateWebhookEndpoint).to.equal("invalid");
    expect(meanings.createWebhookEndpoint).to.equal("absent");
  });

  describe("path parameters", () => {
    it("sets each path parameter on its field", () => {
      expect(decode("getUser", { params: { id: "123456789" } }).id).to.equal("123456789");
      expect(decode("listUserWallets", { params: { user_id: "987654321" } }).userId).to.equal("987654321");
      const delivery = decode("getWebhookDelivery", { params: { endpoint_id: "we_1", id: "whd_2" } });
      expect(delivery.endpointId).to.equal("we_1");
      expect(delivery.id).to.equal("whd_2");
      const replay = decode("replayWebhookDelivery", { params: { endpoint_id: "we_3", id: "whd_4" }, body: {} });
      expect([replay.endpointId, replay.id]).to.deep.equal(["we_3", "whd_4"]);
    });

    it("refuses a path parameter given again in the query or the body", () => {
      refuses("getUser", { params: { id: "123456789" }, query: { id: "5" } }, "id", "Unknown parameter: id.");
      refuses("rotateWebhookEndpointSecret", { params: { id: "we_1" }, body: { id: "we_2" } }, "id", "Unknown parameter: id.");
      refuses("testWebhookEndpoint", { params: { id: "we_1" }, body: { id: "we_1" } }, "id", "Unknown parameter: id.");
    });
  });

  describe("query parameters", () => {
    it("decodes integers and strings", () => {
      const request = decode("listEvents", { query: { limit: "25", starting_after: "evt_1", type: "user.created" } });
      expect(request.limit).to.equal(25);
      expect(request.startingAfter).to.equal("evt_1");
      expect(request.type).to.equal("user.created");
      const empty = decode("listEvents", { query: {} });
      expect(empty.limit).to.equal(undefined);
      expect(empty.startingAfter).to.equal(undefined);
      // Range rules (1 to 100) are the service's; the decoder only checks the type.
      expect(decode("listEvents", { query: { limit: "0" } }).limit).to.equal(0);
      expect(decode("listEvents", { query: { limit: "-3" } }).limit).to.equal(-3);
      expect(decode("listWebhookDeliveries", { params: { endpoint_id: "we_1" }, query: { status: "failed", limit: "100" } })).to.deep.include({
        endpointId: "we_1",
        status: "failed",
        limit: 100,
      });
    });

    it("keeps int32 bounds", () => {
      expect(decode("listEvents", { query: { limit: "2147483647" } }).limit).to.equal(2147483647);
      expect(decode("listEvents", { query: { limit: "-2147483648" } }).limit).to.equal(-2147483648);
      for (const limit of ["2147483648", "-2147483649", "99999999999", "1e3", "1.5", "+5", "abc", "", " 5", "0x10"]) {
        refuses("listEvents", { query: { limit } }, "limit", "limit must be an integer.");
      }
    });

    it("refuses a parameter given more than once", () => {
      refuses("listEvents", { query: { limit: ["1", "2"] } }, "limit", "limit may be given once.");
      refuses("listEvents", { query: { type: ["user.created", "user.created"] } }, "type", "type may be given once.");
    });

    it("refuses an unknown parameter, naming it", () => {
      refuses("listEvents", { query: { limit: "5", expand: "data" } }, "expand", "Unknown parameter: expand.");
      // Query names are the proto's snake_case names.
      refuses("listEvents", { query: { startingAfter: "evt_1" } }, "startingAfter", "Unknown parameter: startingAfter.");
      refuses("getSignupConfig", { query: { livemode: "true" } }, "livemode", "Unknown parameter: livemode.");
      refuses("deleteWebhookEndpoint", { params: { id: "we_1" }, query: { force: "true" } }, "force", "Unknown parameter: force.");
    });

    it("refuses unknown query parameters on routes with a body too (README: refused like unknown body fields)", () => {
      refuses("createUser", { query: { dry_run: "true" }, body: { phone: "+14155550100" } }, "dry_run", "Unknown parameter: dry_run.");
      refuses("updateUser", { params: { id: "123456789" }, query: { foo: "1" }, body: {} }, "foo", "Unknown parameter: foo.");
      refuses(
        "rotateWebhookEndpointSecret",
        { params: { id: "we_1" }, query: { grace_period_hours: "1" } },
        "grace_period_hours",
        "Unknown parameter: grace_period_hours.",
      );
    });

    it("ignores a query value that is absent", () => {
      expect(decode("listEvents", { query: { limit: undefined } }).limit).to.equal(undefined);
    });

    describe("booleans (no public GET has one: a route over AdminService's UpdateOrganization)", () => {
      const method = AdminService.method.updateOrganization;
      const route: RestRoute = {
        httpMethod: "GET",
        pathTemplate: "/v1/organizations/{id}",
        fastifyPath: "/v1/organizations/:id",
        pathParams: ["id"],
        body: "",
        service: AdminService as never,
        method,
      };
      const decodeQuery = (query: RestInput["query"]) =>
        decodeRestRequest(route, { params: { id: "org_1" }, query, body: undefined }, "invalid") as any;

      it("reads true and false", () => {
        expect(decodeQuery({ suspended: "true", live_enabled: "false" })).to.deep.include({ id: "org_1", suspended: true, liveEnabled: false });
      });

      it("refuses any other spelling", () => {
        for (const value of ["TRUE", "1", "yes", "", "false "]) {
          expectValidationError(() => decodeQuery({ suspended: value }), "suspended", /^suspended must be a boolean\.$/);
        }
        expectValidationError(() => decodeQuery({ suspended: ["true", "true"] }), "suspended", /^suspended may be given once\.$/);
      });
    });
  });

  describe("a `*` body", () => {
    it("decodes fields, nested objects and timestamps", () => {
      const request = decode("createUser", {
        body: {
          phone: "+14155550100",
          external_id: "ext-1",
          first_name: "Ada",
          terms_acceptance: { version: "2026-01", accepted_at: "2026-01-15T09:30:00+02:00" },
        },
      });
      expect(request.phone).to.equal("+14155550100");
      expect(request.externalId).to.equal("ext-1");
      expect(request.firstName).to.equal("Ada");
      expect(request.termsAcceptance.version).to.equal("2026-01");
      expect(timestampDate(request.termsAcceptance.acceptedAt).toISOString()).to.equal("2026-01-15T07:30:00.000Z");
      expect(
        decode("createUser", { body: { phone: "+1", terms_acceptance: { version: "v", accepted_at: "2026-01-15T09:30:00.123456Z" } } })
          .termsAcceptance.acceptedAt.nanos,
      ).to.equal(123_000_000);
    });

    it("treats a missing body as an empty one", () => {
      const request = decode("createUser", { body: undefined });
      expect(request.phone).to.equal("");
      expect(request.externalId).to.equal(undefined);
    });

    it("refuses an unknown field, naming it (nested ones dotted)", () => {
      refuses("createUser", { body: { phone: "+14155550100", nickname: "x" } }, "nickname", "Unknown parameter: nickname.");
      refuses("createUser", { body: { firstName: "Ada" } }, "firstName", "Unknown parameter: firstName.");
      refuses(
        "createUser",
        { body: { terms_acceptance: { version: "v1", signed: true } } },
        "terms_acceptance.signed",
        "Unknown parameter: terms_acceptance.signed.",
      );
      refuses("testWebhookEndpoint", { params: { id: "we_1" }, body: { message: "hi" } }, "message", "Unknown parameter: message.");
      refuses(
        "replayWebhookDelivery",
        { params: { endpoint_id: "we_1", id: "whd_1" }, body: { endpoint_id: "we_2" } },
        "endpoint_id",
        "Unknown parameter: endpoint_id.",
      );
    });

    it("refuses wrong types, naming the dotted parameter", () => {
      refuses("createUser", { body: { phone: 14155550100 } }, "phone", "phone must be a string.");
      refuses(
        "createUser",
        { body: { phone: "+1", terms_acceptance: { version: 5 } } },
        "terms_acceptance.version",
        "terms_acceptance.version must be a string.",
      );
      refuses("createUser", { body: { terms_acceptance: "2026-01" } }, "terms_acceptance", "terms_acceptance must be an object.");
      refuses("createUser", { body: { terms_acceptance: ["2026-01"] } }, "terms_acceptance", "terms_acceptance must be an object.");
      refuses(
        "createWebhookEndpoint",
        { body: { url: "https://example.com/hook", event_types: "user.created" } },
        "event_types",
        "event_types must be an array.",
      );
      refuses("createWebhookEndpoint", { body: { url: ["https://example.com/hook"] } }, "url", "url must be a string.");
    });

    it("names the element of a list that has the wrong type, and says what the element must be", () => {
      refuses(
        "createWebhookEndpoint",
        { body: { url: "https://example.com/hook", event_types: ["user.created", 5] } },
        "event_types[1]",
        "event_types[1] must be a string.",
      );
      refuses("createWebhookEndpoint", { body: { event_types: [null] } }, "event_types[0]", "event_types[0] must be a string.");
      const decoded = decode("createWebhookEndpoint", { body: { url: "https://example.com/hook", event_types: ["user.created", "kyc.approved"] } });
      expect(decoded.eventTypeList.values).to.deep.equal(["user.created", "kyc.approved"]);
    });

    it("CreateWebhookEndpoint: event_types fills the list with presence, an empty one included, and the field names stay hidden", () => {
      const empty = decode("createWebhookEndpoint", { body: { url: "https://example.com/hook", event_types: [] } });
      // Sent empty: left for the method to refuse, as it refuses the same message over gRPC.
      expect(empty.eventTypeList.values).to.deep.equal([]);
      expect(empty.eventTypes).to.deep.equal([]);
      expect(decode("createWebhookEndpoint", { body: { url: "https://example.com/hook" } }).eventTypeList).to.equal(undefined);
      refuses(
        "createWebhookEndpoint",
        { body: { url: "https://example.com/hook", event_type_list: { values: ["*"] } } },
        "event_type_list",
        "Unknown parameter: event_type_list.",
      );
      refuses("createWebhookEndpoint", { body: { event_types: { values: ["*"] } } }, "event_types", "event_types must be an array.");
    });

    it("refuses a timestamp that is not an RFC 3339 date-time with an offset", () => {
      for (const acceptedAt of ["2026-02-30T00:00:00Z", "2026-01-15T09:30:00", "2026-01-15", "yesterday", 1768469400, {}]) {
        refuses(
          "createUser",
          { body: { phone: "+1", terms_acceptance: { version: "v1", accepted_at: acceptedAt } } },
          "terms_acceptance.accepted_at",
          "terms_acceptance.accepted_at must be an RFC 3339 date-time string.",
        );
      }
    });

    it("reads null as leaving the field out, at the top level and inside objects", () => {
      const request = decode("createUser", { body: { phone: "+14155550100", external_id: null, email: null, terms_acceptance: null } });
      expect(request.externalId).to.equal(undefined);
      expect(request.email).to.equal(undefined);
      expect(request.termsAcceptance).to.equal(undefined);
      const nested = decode("createUser", { body: { phone: "+1", terms_acceptance: { version: null, accepted_at: "2026-01-15T09:30:00Z" } } });
      expect(nested.termsAcceptance.version).to.equal("");
      expect(nested.phone).to.equal("+1");
      expect(decode("createUser", { body: { phone: null } }).phone).to.equal("");
      const endpoint = decode("createWebhookEndpoint", { body: { url: "https://example.com/hook", description: null, event_types: null } });
      expect(endpoint.url).to.equal("https://example.com/hook");
      expect(endpoint.description).to.equal(undefined);
      expect(endpoint.eventTypeList).to.equal(undefined);
      expect(endpoint.eventTypes).to.deep.equal([]);
    });

    it("checks int32 bounds and integrality", () => {
      const rotate = (grace: unknown) => decode("rotateWebhookEndpointSecret", { params: { id: "we_1" }, body: { grace_period_hours: grace } });
      expect(rotate(24).gracePeriodHours).to.equal(24);
      expect(rotate(0).gracePeriodHours).to.equal(0);
      expect(rotate(2 ** 31 - 1).gracePeriodHours).to.equal(2 ** 31 - 1);
      expect(rotate(-(2 ** 31)).gracePeriodHours).to.equal(-(2 ** 31));
      for (const grace of [2 ** 31, -(2 ** 31) - 1, 1.5, "24", true, [24], { hours: 24 }, Number.MAX_SAFE_INTEGER]) {
        refuses(
          "rotateWebhookEndpointSecret",
          { params: { id: "we_1" }, body: { grace_period_hours: grace } },
          "grace_period_hours",
          "grace_period_hours must be an integer.",
        );
      }
    });

    it("refuses a boolean of the wrong type", () => {
      refuses("updateWebhookEndpoint", { params: { id: "we_1" }, body: { enabled: "false" } }, "enabled", "enabled must be a boolean.");
      refuses("updateWebhookEndpoint", { params: { id: "we_1" }, body: { enabled: 0 } }, "enabled", "enabled must be a boolean.");
    });
  });

  describe("a PATCH body", () => {
    it("UpdateUser: the keys sent become the update mask, and null clears the field", () => {
      const request = decode("updateUser", { params: { id: "123456789" }, body: { first_name: "Ada", email: null, terms_acceptance: null } });
      expect(request.id).to.equal("123456789");
      expect(request.profile.firstName).to.equal("Ada");
      expect(request.profile.email).to.equal(undefined);
      expect(request.profile.termsAcceptance).to.equal(undefined);
      expect(request.updateMask.paths).to.deep.equal(["first_name", "email", "terms_acceptance"]);
    });

    it("UpdateUser: an empty or missing body changes nothing (empty mask)", () => {
      for (const body of [{}, undefined]) {
        const request = decode("updateUser", { params: { id: "123456789" }, body });
        expect(request.updateMask.paths).to.deep.equal([]);
        expect(request.profile.firstName).to.equal(undefined);
      }
    });

    it("UpdateUser: decodes nested objects; keys that are no field go to the mask for the method to refuse, as over gRPC", () => {
      const request = decode("updateUser", {
        params: { id: "1" },
        body: { terms_acceptance: { version: "v2", accepted_at: "2026-03-01T00:00:00Z" } },
      });
      expect(request.profile.termsAcceptance.version).to.equal("v2");
      expect(request.updateMask.paths).to.deep.equal(["terms_acceptance"]);
      // UsersService.updateUser answers "phone cannot be changed." and "Unknown parameter: id." for these paths.
      const unknown = decode("updateUser", { params: { id: "1" }, body: { phone: "+14155550100", id: "2", update_mask: "email", profile: {} } });
      expect(unknown.id).to.equal("1");
      expect(unknown.updateMask.paths).to.deep.equal(["phone", "id", "update_mask", "profile"]);
      refuses(
        "updateUser",
        { params: { id: "1" }, body: { terms_acceptance: { version: 2 } } },
        "terms_acceptance.version",
        "terms_acceptance.version must be a string.",
      );
      refuses("updateUser", { params: { id: "1" }, body: { tagname: false } }, "tagname", "tagname must be a string.");
    });

    it("UpdateWebhookEndpoint: null is a type error", () => {
      refuses("updateWebhookEndpoint", { params: { id: "we_1" }, body: { enabled: null } }, "enabled", "enabled must be a boolean.");
      refuses("updateWebhookEndpoint", { params: { id: "we_1" }, body: { url: null } }, "url", "url must be a string.");
      refuses(
        "updateWebhookEndpoint",
        { params: { id: "we_1" }, body: { description: "ok", event_types: null } },
        "event_types",
        "event_types must be an array.",
      );
    });

    it("UpdateWebhookEndpoint: the keys sent become the update mask", () => {
      const request = decode("updateWebhookEndpoint", { params: { id: "we_1" }, body: { enabled: false, description: "", event_types: ["*"] } });
      expect(request.id).to.equal("we_1");
      expect(request.endpoint.enabled).to.equal(false);
      expect(request.endpoint.description).to.equal("");
      expect(request.endpoint.eventTypes).to.deep.equal(["*"]);
      expect(request.updateMask.paths).to.deep.equal(["enabled", "description", "event_types"]);
      expect(decode("updateWebhookEndpoint", { params: { id: "we_1" }, body: { secret: "whsec_x" } }).updateMask.paths).to.deep.equal(["secret"]);
    });
  });
});
