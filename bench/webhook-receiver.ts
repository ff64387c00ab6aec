// The webhook benchmark's receiver, in its own process so its work does not share the service's cores' event
// loop: answers 200 at once and records when each event id arrived. Prints its port; GET /__receipts answers
// (and forgets) the receipts so far as [event id, ms since the epoch] pairs. It ends when its standard input does:
// the bench that started it is gone, killed or crashed, and nothing would stop it otherwise.
import http from "node:http";
import type { AddressInfo } from "node:net";

let receipts: [string, number][] = [];

const server = http.createServer((req, res) => {
  if (req.method === "GET" && req.url === "/__receipts") {
    const body = JSON.stringify(receipts);
    receipts = [];
    res.writeHead(200, { "content-type": "application/json" }).end(body);
    return;
  }
  req.resume();
  req.on("end", () => {
    receipts.push([String(req.headers["svc-event-id"]), performance.timeOrigin + performance.now()]);
    res.writeHead(200).end();
  });
});
server.keepAliveTimeout = 5000;
server.listen(0, "127.0.0.1", () => console.log(`port ${(server.address() as AddressInfo).port}`));
process.stdin.resume();
process.stdin.once("end", () => process.exit(0));
