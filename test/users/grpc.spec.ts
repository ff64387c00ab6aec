// UsersService over gRPC (HTTP/2 on GRPC_PORT): the same rules and codes as REST.
import { create } from "@bufbuild/protobuf";
import { FieldMaskSchema } from "@bufbuild/protobuf/wkt";
import { Code, createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { expect } from "chai";
import { ProfileFieldsSchema, UsersService } from "../../gen/svc/v1/users_pb.ts";
import { rpcErrorOf } from "../support/errors.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

function usersClient(svc: TestService, key: string): Client<typeof UsersService> {
  const auth: Interceptor = (next) => (req) => {
    req.header.set("authorization", `Bearer ${key}`);
    return next(req);
  };
  return createClient(UsersService, createGrpcTransport({ baseUrl: `http://${svc.grpcAddress}`, interceptors: [auth] }));
}

describe("users over gRPC", () => {
  let svc: TestService;
  let sandbox: Client<typeof UsersService>;
  let live: Client<typeof UsersService>;
  before(async () => {
    svc = await startTestService();
    sandbox = usersClient(svc, svc.sandboxKey);
    live = usersClient(svc, svc.liveKey);
  });
  after(async () => {
    await svc.stop();
  });

  it("creates, reads and updates with a field mask (unset path clears)", async () => {
    const created = await sandbox.createUser({ phone: "+15005550100", firstName: "Grace", lastName: "Hopper" });
    expect(created.user!.verified).to.equal(true);
    const updated = await sandbox.updateUser({
      id: created.user!.id,
      profile: create(ProfileFieldsSchema, { firstName: "G." }),
      updateMask: create(FieldMaskSchema, { paths: ["first_name", "last_name"] }),
    });
    expect(updated.profile!.firstName).to.equal("G.");
    expect(updated.profile!.lastName).to.equal(undefined);
    const read = await sandbox.getUser({ id: created.user!.id });
    expect(read.profile!.lastName).to.equal(undefined);
  });

  it("answers the catalogue codes in ErrorInfo: validation, conflict, isolation", async () => {
    expect(await rpcErrorOf(sandbox.createUser({ phone: "12" }))).to.deep.equal({
      code: Code.InvalidArgument,
      reason: "validation_error",
      param: "phone",
    });
    await sandbox.createUser({ phone: "+15005550101" });
    expect(await rpcErrorOf(sandbox.createUser({ phone: "+15005550101" }))).to.deep.equal({
      code: Code.AlreadyExists,
      reason: "user_already_exists",
      param: "phone",
    });
    const user = await sandbox.createUser({ phone: "+15005550102" });
    expect(await rpcErrorOf(live.getUser({ id: user.user!.id }))).to.deep.equal({ code: Code.NotFound, reason: "user_not_found", param: undefined });
    expect(await rpcErrorOf(sandbox.updateUser({ id: user.user!.id, updateMask: create(FieldMaskSchema, { paths: ["phone"] }) }))).to.deep.equal({
      code: Code.InvalidArgument,
      reason: "validation_error",
      param: "phone",
    });
  });
});
