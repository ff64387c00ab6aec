// The identity verification provider of live KYC sessions. It opens a session on its hosted page and later
// reports its decision through AdminService.RecordKycDecision. The default is simulated and can be told to fail.
export interface KycSessionRequest {
  sessionId: string;
  userId: string;
  projectId: string;
  returnUrl: string | null;
}

export interface KycProvider {
  /** Opens the session at the provider; answers the hosted page's URL, or rejects (503 kyc_session_unavailable). */
  openSession(request: KycSessionRequest, signal: AbortSignal): Promise<{ url: string }>;
}

class KycProviderUnavailableError extends Error {}

const SIMULATED_KYC_BASE_URL = "https://kyc.simulated.invalid/sessions/";

export class SimulatedKycProvider implements KycProvider {
  /** Sessions opened, oldest first. */
  readonly opened: KycSessionRequest[] = [];
  private failuresLeft = 0;

  /** The next `count` openings fail; `Infinity` fails until told otherwise. */
  failNext(count: number): void {
    this.failuresLeft = count;
  }

  async openSession(request: KycSessionRequest, signal: AbortSignal): Promise<{ url: string }> {
    signal.throwIfAborted();
    if (this.failuresLeft > 0) {
      this.failuresLeft--;
      throw new KycProviderUnavailableError("simulated KYC provider failure");
    }
    this.opened.push({ ...request });
    return { url: `${SIMULATED_KYC_BASE_URL}${request.sessionId}` };
  }
}
