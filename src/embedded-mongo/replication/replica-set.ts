// One-member replica set: this server is the primary of `setName`. It supplies the topology fields of hello
// and the cluster time every reply carries on a replica set ($clusterTime, operationTime).
import { Binary, Long, ObjectId, type Document } from "bson";
import type { Oplog } from "./oplog.ts";

// mongod's NotPrimaryError and ShutdownError categories: their errors carry the member's topologyVersion.
const STATE_CHANGE_CODES = new Set([189, 91, 10107, 11600, 11602, 13435, 13436]);

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

  /**
   * Adds what mongod puts on every reply of a replica set member (unless the reply already has it): the cluster
   * time, and on "not primary" / shutdown errors (or write concern errors) the topologyVersion, by which drivers tell that such an error
   * does not describe a newer topology than the one they know (so they retry at once instead of waiting for
   * the next heartbeat).
   */
  stampClusterTime(reply: Document): void {
    const ts = this.oplog.lastTimestamp;
    const stateChange =
      (reply.ok === 0 && STATE_CHANGE_CODES.has(reply.code as number)) ||
      STATE_CHANGE_CODES.has((reply.writeConcernError as Document | undefined)?.code as number);
    if (stateChange && reply.topologyVersion === undefined) {
      reply.topologyVersion = this.topologyVersion();
    }
    if (reply.$clusterTime === undefined) reply.$clusterTime = { clusterTime: ts, signature: ZERO_SIGNATURE };
    if (reply.operationTime === undefined) reply.operationTime = ts;
  }
}
