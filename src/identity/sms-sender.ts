// The SMS provider of live phone verification. The default is simulated: it keeps the messages in process
// (tests read them) and can be told to fail. A real provider implements the same interface.
export interface SmsMessage {
  /** E.164. */
  to: string;
  body: string;
}

export interface SmsSender {
  /** Sends one message; rejects when the provider failed (the caller answers 503 verification_unavailable). */
  send(message: SmsMessage, signal: AbortSignal): Promise<void>;
}

export class SmsUnavailableError extends Error {}

export class SimulatedSmsSender implements SmsSender {
  /** Every message sent, oldest first. Held in memory only: never logged. */
  readonly messages: SmsMessage[] = [];
  private failuresLeft = 0;

  /** The next `count` sends fail; `Infinity` fails until told otherwise. */
  failNext(count: number): void {
    this.failuresLeft = count;
  }

  async send(message: SmsMessage, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.failuresLeft > 0) {
      this.failuresLeft--;
      throw new SmsUnavailableError("simulated SMS provider failure");
    }
    this.messages.push({ ...message });
  }

  /** The messages sent to `phone`, oldest first. */
  sentTo(phone: string): SmsMessage[] {
    return this.messages.filter((m) => m.to === phone);
  }
}

/** The text of a verification message. */
export function verificationMessage(code: string): string {
  return `Your verification code is ${code}. It expires in 10 minutes.`;
}
