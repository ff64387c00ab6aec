// The SMS provider of live phone verification. The default is simulated: it keeps the latest messages in process
// (tests and the console's outbox read them) and can be told to fail. A real provider implements the same
// interface and exposes nothing it sent.
export interface SmsMessage {
  /** E.164. */
  to: string;
  body: string;
}

export interface SmsSender {
  /** Sends one message; rejects when the provider failed (the caller answers 503 verification_unavailable). */
  send(message: SmsMessage, signal: AbortSignal): Promise<void>;
}

class SmsUnavailableError extends Error {}

/** A message the simulated provider sent, and when. */
export interface SentSms extends SmsMessage {
  sentAt: Date;
}

/** The simulated provider keeps the latest messages only, so a long-running development process does not grow. */
const SIMULATED_OUTBOX_SIZE = 1000;

export class SimulatedSmsSender implements SmsSender {
  /** The latest messages sent, oldest first. Held in memory only: never logged. */
  readonly messages: SentSms[] = [];
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
    this.messages.push({ ...message, sentAt: new Date() });
    if (this.messages.length > SIMULATED_OUTBOX_SIZE) this.messages.splice(0, this.messages.length - SIMULATED_OUTBOX_SIZE);
  }

  /** The messages sent to `phone`, oldest first. */
  sentTo(phone: string): SentSms[] {
    return this.messages.filter((m) => m.to === phone);
  }
}

/** The text of a verification message. */
export function verificationMessage(code: string): string {
  return `Your verification code is ${code}. It expires in 10 minutes.`;
}
