// Recovery points of idempotent creations: a process killed while creations with an Idempotency-Key are in
// flight leaves some written and unanswered. After a restart, every retry with the same key and body ends in
// the object its first run created (a 201 with the same id), never in a conflict with it, over REST and gRPC,
// and no user exists that its client does not know.
import { expect } from "chai";
import { MongoClient } from "mongodb";
import { bearer, GrpcTestClient } from "../support/grpc-client.ts";
import { freePort, startDatabaseProcess, startServiceProcess, type RunningProcess } from "../support/processes.ts";
import { until } from "../support/eventually.ts";
import { uniquePhone } from "../support/phones.ts";

const KEY = "svc_test_recoveryrecoveryrecovery01";
const CREATIONS = 240;

interface Creation {
  key: string;
  phone: string;
  transport: "rest" | "grpc";
  /** The user id the client was answered, once it was. */
  id: string | null;
}

describe("idempotent creations across a crash (SIGKILL)", function () {
  this.timeout(90_000);
  let database: (RunningProcess & { uri: string }) | null = null;
  let service: RunningProcess | null = null;
  let client: MongoClient | null = null;
  let grpcClient: GrpcTestClient | null = null;

  after(async () => {
    grpcClient?.close();
    await service?.kill("SIGKILL");
    await client?.close();
    await database?.kill();
  });

  it("answers every retried creation with the user its first run wrote, over REST and gRPC", async () => {
    database = await startDatabaseProcess();
    const uri = `${database.uri.replace(/\/?$/, "")}/svc_recovery`;
    client = await MongoClient.connect(uri);
    const users = client.db().collection("users");
    const env = { SVC_SANDBOX_KEY: KEY, SVC_IDEMPOTENCY_LOCK_MS: "1000", PORT: String(await freePort()), GRPC_PORT: String(await freePort()) };

    const creations: Creation[] = Array.from({ length: CREATIONS }, (_, i) => ({
      key: `recovery-${i}`,
      phone: uniquePhone(),
      transport: i % 2 === 0 ? "rest" : "grpc",
      id: null,
    }));
    let running = await startServiceProcess(uri, env);
    service = running;
    grpcClient = new GrpcTestClient(`127.0.0.1:${env.GRPC_PORT}`);

    /** One try: the user id when the answer is the creation (or its replay), "busy" while the key is held, null on no answer. */
    const attempt = async (creation: Creation): Promise<string | "busy" | null> => {
      if (creation.transport === "rest") {
        const response = await fetch(`${running.baseUrl}/v1/users`, {
          method: "POST",
          headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", "idempotency-key": creation.key },
          body: JSON.stringify({ phone: creation.phone }),
        }).catch(() => null);
        if (!response) return null;
        const body = (await response.json().catch(() => null)) as { id?: string; error?: { code: string } } | null;
        if (response.status === 201) return body!.id!;
        if (body?.error?.code === "idempotency_in_progress") return "busy";
        throw new Error(`${creation.key}: REST answered ${response.status} ${JSON.stringify(body)}`);
      }
      const outcome = await grpcClient!.call(
        "UsersService",
        "CreateUser",
        { phone: creation.phone },
        { ...bearer(KEY), "idempotency-key": creation.key },
      );
      if (outcome.ok) return outcome.reply.message.user.id as string;
      if (outcome.failure.info.reason === "idempotency_in_progress") return "busy";
      if (outcome.failure.code === 14 || outcome.failure.code === 1 || outcome.failure.code === 4) return null; // unavailable, cancelled, deadline
      throw new Error(`${creation.key}: gRPC answered ${outcome.failure.code} ${outcome.failure.info.reason} ${outcome.failure.details}`);
    };

    // First life: creations in flight when the process is killed.
    let next = 0;
    const burst = async () => {
      while (next < creations.length) {
        const creation = creations[next++]!;
        const answer = await attempt(creation).catch(() => null);
        if (answer !== null && answer !== "busy") creation.id = answer;
      }
    };
    const workers = Array.from({ length: 16 }, burst);
    const caught = await until(async () => (await users.countDocuments({})) >= 40, 30_000);
    await running.kill("SIGKILL");
    await Promise.all(workers);
    expect(caught, "users were being written when the process was killed").to.equal(true);
    const written = await users.countDocuments({});
    const answered = creations.filter((c) => c.id !== null).length;
    expect(written, "some creations were written without their client hearing of it").to.be.greaterThan(answered);

    // Second life: every client retries with the same key and body until it is answered.
    running = await startServiceProcess(uri, env);
    service = running;
    grpcClient.close();
    grpcClient = new GrpcTestClient(`127.0.0.1:${env.GRPC_PORT}`);
    for (const creation of creations) {
      const first = creation.id;
      let answer: string | "busy" | null = "busy";
      const answeredInTime = await until(async () => {
        answer = await attempt(creation);
        return answer !== "busy" && answer !== null;
      }, 20_000);
      expect(answeredInTime, `${creation.key} was answered after the restart`).to.equal(true);
      if (first !== null) expect(answer, `${creation.key}: the replay names the user first answered`).to.equal(first);
      creation.id = answer;
    }

    // Every user is its client's: one per phone, with the id that client was answered.
    const stored = await users.find({}, { projection: { _id: 1, phone: 1 } }).toArray();
    expect(stored.length).to.equal(creations.length);
    const idByPhone = new Map(stored.map((u) => [String(u.phone), String(u._id)]));
    for (const creation of creations) expect(idByPhone.get(creation.phone), creation.key).to.equal(creation.id);
  });
});
