// Agenda's debug loggers (src/jobs/agenda-debug-loggers.ts): an extension is built once per logger and namespace,
// and enabling namespaces afterwards still reaches it.
import { expect } from "chai";
import { createRequire } from "node:module";
import "../../src/jobs/job-queue.ts";

interface Logger {
  (...args: unknown[]): void;
  enabled: boolean;
  namespace: string;
  extend: (namespace: string, delimiter?: string) => Logger;
}
const debug = createRequire(import.meta.resolve("agenda"))("debug") as {
  (namespace: string): Logger;
  enable: (namespaces: string) => void;
  disable: () => string;
};

describe("Agenda's debug loggers", () => {
  it("answers the same logger for the same extension, a new one for another namespace or delimiter", () => {
    const log = debug("agenda:kept");
    const step = log.extend("step");
    expect(log.extend("step")).to.equal(step);
    expect(step.namespace).to.equal("agenda:kept:step");
    expect(log.extend("other")).to.not.equal(step);
    expect(log.extend("step", "/").namespace).to.equal("agenda:kept/step");
    expect(step.extend("inner")).to.equal(step.extend("inner"));
  });

  it("enables and disables a kept extension with its namespace", () => {
    const before = debug.disable();
    try {
      const log = debug("agenda:switch");
      const on = log.extend("on");
      const off = log.extend("off");
      expect(on.enabled).to.equal(false);
      debug.enable("agenda:switch:on");
      expect(log.extend("on")).to.equal(on);
      expect(on.enabled).to.equal(true);
      expect(off.enabled).to.equal(false);
    } finally {
      debug.enable(before);
    }
  });
});
