// Opening a transaction on its user's wallet: one conditional write of the user's document that applies its first
// balance change, records it in flight and pushes its events, or the answer of the transaction of that id when it
// was opened already (a retry after a crash, a repeated deposit reference). docs/contract.md, Money, states the
// conditions and why they keep the ledger's invariant.
import { svcError } from "../domain/errors.ts";
import type { TenantScope } from "../domain/tenant-scope.ts";
import { openingDelta, requiredCents, transactionEventTypes } from "../domain/transaction-transitions.ts";
import { transactionEvents } from "../events/event-factory.ts";
import { CHANGED, compareAndSet } from "../lib/compare-and-set.ts";
import { TtlCache } from "../lib/ttl-cache.ts";
import type { TransactionRecord, TransactionRepository } from "../store/transaction-repository.ts";
import { inflightOf, ledgerOf, type WalletLedgerRepository } from "../store/wallet-ledger.ts";
import type { LedgerWriter } from "./ledger-writer.ts";

/**
 * A user's first wallet never changes once made, so its id is remembered for this long: a new transaction is
 * then opened with one conditional write and no read (the write checks the id, so a stale entry costs a read).
 */
const WALLET_ID_TTL_MS = 10 * 60_000;
const WALLET_ID_ENTRIES = 100_000;

/** Where an opening's follow-up goes (its projection and events' relay). It never rejects. */
export type FinishOpening = (followUp: Promise<void>) => Promise<void>;

export interface TransactionOpeningDependencies {
  wallets: WalletLedgerRepository;
  transactions: TransactionRepository;
  writer: LedgerWriter;
}

/** The opening write of `record`: its balance change, the funds it needs and its events. */
function openingWriteOf(record: TransactionRecord) {
  const events = transactionEvents(transactionEventTypes(null, record), record, record.created_at);
  return { delta: openingDelta(record), requireAvailable: requiredCents(record), events };
}

export class TransactionOpening {
  private readonly walletIds = new TtlCache<string, string>(WALLET_ID_TTL_MS, WALLET_ID_ENTRIES);

  constructor(private readonly deps: TransactionOpeningDependencies) {}

  /**
   * Opens `record`, once `step` (the write of its step job, if any) is done: reads may go along with it, writes
   * only after. Checks, in order: 404 user_not_found, 409 user_suspended, kyc_required, wallet_not_ready,
   * insufficient_funds (withdrawals: available < amount + fee). `mayExist`: the id may have been used before.
   */
  async open(
    step: Promise<void> | null,
    scope: TenantScope,
    record: TransactionRecord,
    mayExist: boolean,
    finish: FinishOpening,
  ): Promise<TransactionRecord> {
    const walletKey = `${scope.projectId}:${scope.livemode}:${record.user_id}`;
    const knownWallet = mayExist ? undefined : this.walletIds.get(walletKey, Date.now());
    if (knownWallet !== undefined) {
      await step;
      // A new id on a wallet seen before: the conditional write checks everything; a refusal is explained below.
      const opened = await this.tryOpenNew(scope, { ...record, wallet_id: knownWallet }, finish);
      if (opened) return opened;
    }
    const read = async () => (await Promise.all([this.deps.wallets.findForOpening(scope, record.user_id, record.id), step]))[0];
    return compareAndSet(`opening of transaction ${record.id}`, read, async (user, attempt) => {
      if (!user) throw svcError("user_not_found");
      const inflight = inflightOf(user, record.id);
      if (inflight) {
        await this.deps.transactions.project(inflight);
        return inflight;
      }
      // Read after the user: a transaction of this id opened later than `ledger.opens` was read is fenced below.
      if (mayExist || attempt > 0) {
        const existing = await this.deps.transactions.findById(record.id);
        if (existing) return existing;
      }
      if (user.suspended) throw svcError("user_suspended");
      if (user.kyc_status !== "approved") throw svcError("kyc_required");
      if (user.wallet_status !== "ready" || user.wallets.length === 0) throw svcError("wallet_not_ready");
      const walletId = user.wallets[0]!.id;
      this.walletIds.set(walletKey, walletId, Date.now());
      const opening: TransactionRecord = { ...record, wallet_id: walletId };
      const ledger = ledgerOf(user);
      if (ledger.available_cents < requiredCents(opening)) throw svcError("insufficient_funds");
      // Null when something changed in between (a concurrent transaction, a suspension, a compaction).
      return (await this.tryOpen(scope, opening, mayExist || attempt > 0 ? ledger.opens : null, finish)) ?? CHANGED;
    });
  }

  /** One conditional opening write (see WalletLedgerRepository.open); null when a condition failed. */
  private async tryOpen(
    scope: TenantScope,
    opening: TransactionRecord,
    seenOpens: number | null,
    finish: FinishOpening,
  ): Promise<TransactionRecord | null> {
    const write = openingWriteOf(opening);
    const owner = await this.deps.wallets.open(scope, opening, { ...write, seenOpens });
    if (!owner) return null;
    await finish(this.deps.writer.afterWrite(owner, opening, write.events));
    return opening;
  }

  /**
   * The opening of a new id, sent with the openings of concurrent requests in one command; null when it did not
   * apply. When some opening of the batch did not, this one is looked up: only its opener knows a new id, and
   * nothing settles it before its opener has answered, so it is in flight if it was opened.
   */
  private async tryOpenNew(scope: TenantScope, opening: TransactionRecord, finish: FinishOpening): Promise<TransactionRecord | null> {
    const write = openingWriteOf(opening);
    const outcome = await this.deps.wallets.openNew(scope, opening, write);
    if (outcome === "unknown" && !inflightOf(await this.deps.wallets.findForOpening(scope, opening.user_id, opening.id), opening.id)) return null;
    // `opens` is read by compactions only, and an opening never settles a transaction.
    const owner = { _id: opening.user_id, project_id: scope.projectId, livemode: scope.livemode, opens: 0 };
    await finish(this.deps.writer.afterWrite(owner, opening, write.events, "new"));
    return opening;
  }
}
