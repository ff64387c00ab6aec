// Following a server stream until ^C (svc listen, svc logs tail). Each stream says when it is subscribed with a
// `caught_up` message: the first time, the command is ready; later, it has reconnected. When the service ends
// the stream (it is stopping) or the connection drops (a transient failure) it opens it again, waiting longer
// each time, and says so once per outage; before the first subscription, and for any other failure, the
// failure ends the command with its one line.
import { say, timestamp } from "./command.ts";
import { CliError, type Connection, describeFailure, isTransient } from "./connection.ts";

/** Waits between reconnections: from the first to the longest. */
const RECONNECT_DELAYS_MS = [250, 500, 1000, 2000, 5000];

export interface StreamFollower<T> {
  /** Opens the stream (again). */
  open(signal: AbortSignal): AsyncIterable<T>;
  /** Said once, when the first stream is subscribed. */
  ready(): void;
  /** Each message but the `caught_up` ones. */
  message(message: T): Promise<void> | void;
}

export async function followStream<T extends { caughtUp: boolean }>(
  connection: Pick<Connection, "address">,
  follower: StreamFollower<T>,
): Promise<void> {
  const stop = new AbortController();
  process.once("SIGINT", () => stop.abort());
  process.once("SIGTERM", () => stop.abort());
  let ready = false;
  let failures = 0;
  while (!stop.signal.aborted) {
    try {
      for await (const message of follower.open(stop.signal)) {
        if (message.caughtUp) {
          // Subscribed: from here on nothing escapes the stream.
          if (!ready) follower.ready();
          else if (failures > 0) say(`${timestamp()}   Reconnected.`);
          ready = true;
          failures = 0;
          continue;
        }
        await follower.message(message);
      }
      if (stop.signal.aborted) break;
      // The service ended the stream (it is stopping): open it again, elsewhere or once it is back.
      if (failures === 0) say(`${timestamp()}   The service ended the stream; reconnecting...`);
      failures = Math.max(failures, 1);
    } catch (error) {
      if (stop.signal.aborted) break;
      // Before the first subscription, any failure (no service there, a refused key) is the answer.
      if (!ready || !isTransient(error)) throw new CliError(describeFailure(error, connection));
      if (failures === 0) say(`${timestamp()}   Connection lost (${describeFailure(error, connection)}); reconnecting...`);
      failures += 1;
    }
    const delay = RECONNECT_DELAYS_MS[Math.min(failures - 1, RECONNECT_DELAYS_MS.length - 1)]!;
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}
