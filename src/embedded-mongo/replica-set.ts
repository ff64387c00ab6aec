// One-member replica set: this server is the primary of `setName`. It supplies the topology fields of hello
// and the cluster time every reply carries on a replica set ($clusterTime, operationTime).
import { Binary, Long, ObjectId, type Document } from "bson";
import type { Oplog } from "./oplog.ts";

const ZERO_SIGNATURE = { hash: new Binary(Buffer.alloc(20)), keyId: Long.ZERO };

export class ReplicaSetMember {
  /** Identifies this process in topologyVersion: a restarted server is a new process to drivers. */
  readonly processId = new ObjectId();
  /** mongod's first election id in term 1. */
  readonly electionId = ObjectId.createFromHexString("7fffffff0000000000000001");
  readonly term = Long.fromNumber(1);

  constructor(
    readonly setName: string,
    /** `host:port` as clients reach this member. */
    readonly me: string,
    private readonly oplog: Oplog,
  ) {}

  /** The topology never changes (one member, always primary), so the counter stays 0. */
  topologyVersion(): Document {
    return { processId: this.processId, counter: Long.ZERO };
  }

  /**
   * A hello reply on this member: mongod's field order, the topology fields around `isWritablePrimary`
   * (`ismaster` for the legacy command).
   */
  hello(primaryField: string, common: Document): Document {
    const lastTs = this.oplog.lastTimestamp;
    const majorityTs = this.oplog.visibleTimestamp;
    return {
      topologyVersion: this.topologyVersion(),
      hosts: [this.me],
      setName: this.setName,
      setVersion: 1,
      [primaryField]: true,
      secondary: false,
      primary: this.me,
      me: this.me,
      electionId: this.electionId,
      lastWrite: {
        opTime: { ts: lastTs, t: this.term },
        lastWriteDate: new Date((lastTs.high >>> 0) * 1000),
        majorityOpTime: { ts: majorityTs, t: this.term },
        majorityWriteDate: new Date((majorityTs.high >>> 0) * 1000),
      },
      ...common,
    };
  }

  /** Adds what mongod puts on every reply of a replica set member (unless the reply already has it). */
  stampClusterTime(reply: Document): void {
    const ts = this.oplog.lastTimestamp;
    if (reply.$clusterTime === undefined) reply.$clusterTime = { clusterTime: ts, signature: ZERO_SIGNATURE };
    if (reply.operationTime === undefined) reply.operationTime = ts;
  }
}
